import type { ServerDeps } from '../deps.ts';
import { loadSigningKeys } from '../signing-keys.ts';
import { createBillingFeature } from './billing/index.ts';
import { createBlackboardFeature } from './blackboard/index.ts';
import { createCatalogFeature } from './catalog/index.ts';
import { createDiscoveryFeature } from './discovery/index.ts';
import { combineFeatures, type Features } from './feature.ts';
import { createIdentityFeature } from './identity/index.ts';
import { createInferenceFeature } from './inference/index.ts';
import { createJobsFeature } from './jobs/index.ts';
import { createMcpFeature } from './mcp/index.ts';
import { createModelsFeature } from './models/index.ts';
import { createPdfFeature } from './pdf/index.ts';
import { createReceiptsFeature } from './receipts/index.ts';
import { createRequestsFeature } from './requests/index.ts';
import { createResponsesFeature } from './responses/index.ts';
import { createSystemFeature } from './system/index.ts';
import { createTasksFeature } from './tasks/index.ts';

/**
 * Builds every feature, in order: a feature that another is given is built first, above the
 * list. A contract key no feature in the list owns is a compile error (see combineFeatures).
 */
export async function createFeatures(deps: ServerDeps): Promise<Features> {
  // Loaded once: the OAuth keys and the receipt key derive from one secret (generated on first start).
  const signingKeys = await loadSigningKeys(deps.config.identity.signingSecret, deps.config.dataDir);
  if (signingKeys.file)
    deps.log.info({ file: signingKeys.file }, 'signing secret kept in the data directory (generated on first start); set SVC_SIGNING_SECRET so replicas agree');
  const receipts = await createReceiptsFeature(deps, signingKeys);
  const requests = createRequestsFeature(deps);
  const catalog = await createCatalogFeature(deps, { receipts: receipts.receipts, requests: requests.store });
  const blackboard = await createBlackboardFeature(deps, { receipts: receipts.receipts });
  const pdf = createPdfFeature(deps);
  // The durable task store: long operations (background responses, MCP tasks, A2A skills) run on it.
  const tasks = createTasksFeature(deps);
  const inference = createInferenceFeature(deps, { blackboard: blackboard.service, catalog: catalog.catalog, requests: requests.store });
  return combineFeatures([
    tasks,
    receipts,
    requests,
    catalog,
    blackboard,
    pdf,
    await createIdentityFeature(deps, { signingKeys, receipts: receipts.receipts }),
    inference,
    createBillingFeature(deps, { responseCache: inference.responseCache }),
    createJobsFeature(deps, { pdf: pdf.service }),
    createSystemFeature(deps),
    createModelsFeature(deps),
    createDiscoveryFeature(deps),
    createResponsesFeature(deps, { responseCache: inference.responseCache, tasks: tasks.tasks }),
    createMcpFeature(deps),
  ]);
}
