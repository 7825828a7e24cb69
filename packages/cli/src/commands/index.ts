import type { Command } from 'commander';
import { registerCacheCommands } from './cache.ts';
import { registerCatalogCommands } from './catalog.ts';
import { registerCompletionCommand } from './completion.ts';
import { registerConfigCommands } from './config.ts';
import { registerDiscoverCommands } from './discover.ts';
import { registerDownloadCommands } from './download.ts';
import { registerBillingCommands } from './billing.ts';
import { registerBlackboardCommands } from './blackboard.ts';
import { registerHealthCommands } from './health.ts';
import { registerAuthCommands, registerIdentityCommands } from './identity.ts';
import { registerInferenceCommands, registerTryCommand } from './inference.ts';
import { registerJobsCommands } from './jobs.ts';
import { registerKeysCommands } from './keys.ts';
import { registerMcpCommands } from './mcp.ts';
import { registerPdfCommands } from './pdf.ts';
import { registerReceiptCommands } from './receipts.ts';
import { registerRequestCommands } from './requests.ts';
import { registerResponsesCommands } from './responses.ts';
import { registerUpstreamsCommands } from './upstreams.ts';
import { registerVersionCommands } from './version.ts';

/** Every command group; a feature adds its `register…Commands` here. */
export function registerCommands(program: Command): void {
  registerHealthCommands(program);
  registerVersionCommands(program);
  registerCatalogCommands(program);
  registerDownloadCommands(program);
  registerBlackboardCommands(program);
  registerIdentityCommands(program);
  registerAuthCommands(program);
  registerConfigCommands(program);
  registerKeysCommands(program);
  registerPdfCommands(program);
  registerInferenceCommands(program);
  registerTryCommand(program);
  registerBillingCommands(program);
  registerReceiptCommands(program);
  registerRequestCommands(program);
  registerDiscoverCommands(program);
  registerJobsCommands(program);
  registerResponsesCommands(program);
  registerCacheCommands(program);
  registerUpstreamsCommands(program);
  registerMcpCommands(program);
  // Last: its script walks every command registered before it.
  registerCompletionCommand(program);
}
