import type { Logger } from 'pino';
import type { Config } from './server-config.ts';
import type { Database } from './db/database.ts';
import type { CacheRegistry } from './observability/cache-registry.ts';
import type { ModelRegistry } from './features/models/model-registry.ts';
import type { SourceFetchSeam } from './outbound/source-fetch.ts';
import type { ServerLifecycle } from './lifecycle.ts';
import type { Scheduler } from './scheduler.ts';
import type { HttpMetrics } from './observability/metrics.ts';
import type { UsageHook } from './inference/usage-hook.ts';
import type { ContractDispatch } from './http/dispatch.ts';

/** What every feature is built from. Features take what they need; none reaches for globals. */
export interface ServerDeps {
  readonly config: Config;
  readonly database: Database;
  readonly log: Logger;
  readonly metrics: HttpMetrics;
  readonly models: ModelRegistry;
  /** Every inference call reports its usage here; metrics, billing and jobs subscribe. */
  readonly usage: UsageHook;
  readonly caches: CacheRegistry;
  /** Draining or serving: readiness and event streams follow it. */
  readonly lifecycle: ServerLifecycle;
  /** Housekeeping timers (prunes, sweeps): features schedule them here and the server stops them on shutdown. */
  readonly scheduler: Scheduler;
  /** Wall-clock ms when the server was created, for uptime. */
  readonly startedAt: number;
  /** Public URLs of the two surfaces; known for certain only once listening. */
  publicUrls(): { baseUrl: string; apiUrl: string };
  /** Runs a contract route in-process through the REST app (MCP tools, A2A skills); usable once the server has built its apps. */
  readonly dispatch: ContractDispatch;
  /** Set by tests only (`createServer` options); production leaves it undefined. */
  readonly testSeams?: TestSeams;
}

/**
 * Seams a test needs to reach code paths it cannot reach from outside. Given in code to
 * `createServer`, never read from the environment, so no deployment can set one by accident.
 */
export interface TestSeams {
  /** The module the PDF parser workers load instead of worker/pdf-worker.ts (a wrapper that starts slowly). */
  pdfWorkerModule?: URL;
  /** The module the validate_json and calculate workers load instead of job-operations-worker.ts (one that fails to load). */
  jobOperationsWorkerModule?: URL;
  /** The module the discovery documents (OpenAPI, llms) are built in instead of documents-worker.ts (one that fails to load). */
  documentsWorkerModule?: URL;
  /** The module x402's default tables are read in instead of x402-defaults-worker.ts (one that fails to load). */
  x402DefaultsWorkerModule?: URL;
  /** The module the console's first paints are drawn in instead of console/first-paint-worker.ts (one that holds its thread on a page). */
  firstPaintWorkerModule?: URL;
  /** Resolver, trusted CA and address exemption of the PDF URL fetcher (a loopback HTTPS source). */
  pdfSourceFetch?: SourceFetchSeam;
  /** The same for webhook deliveries (a receiver of the test's on loopback). */
  webhookFetch?: SourceFetchSeam;
  /** The same for the fetcher of client ID metadata documents (OAuth client_id URLs served by the test). */
  clientMetadataFetch?: SourceFetchSeam;
  /** Every /mcp request goes through the MCP SDK's handler, plain tool calls included (features/mcp/fast-tool-call.ts). */
  mcpSdkOnly?: boolean;
  /** The time budget of a /mcp JSON-RPC batch instead of mcpBatchRules.timeBudgetMs (a test holds it at its edge without waiting a minute). */
  mcpBatchTimeBudgetMs?: number;
}
