import type { ServerDeps } from '../deps.ts';
import { loadSigningKeys, type SigningKeys } from '../signing-keys.ts';
import { billingConfigFrom } from './billing/billing-config.ts';
import { createBillingFeature } from './billing/index.ts';
import { x402ConfigFrom } from './billing/x402-config.ts';
import { blackboardConfigFrom } from './blackboard/blackboard-config.ts';
import { createBlackboardFeature } from './blackboard/index.ts';
import { catalogConfigFrom } from './catalog/catalog-config.ts';
import { createCatalogFeature } from './catalog/index.ts';
import { createDiscoveryFeature } from './discovery/index.ts';
import type { Features } from './feature.ts';
import { FeatureList } from './feature-list.ts';
import { identityConfigFrom } from './identity/identity-config.ts';
import { createIdentityFeature } from './identity/index.ts';
import { limitsConfigFrom } from './identity/limits-config.ts';
import { createInferenceFeature } from './inference/index.ts';
import { responseCacheConfigFrom } from './inference/response-cache-config.ts';
import { createJobsFeature } from './jobs/index.ts';
import { jobsConfigFrom } from './jobs/jobs-config.ts';
import { createMcpFeature } from './mcp/index.ts';
import { mcpConfigFrom } from './mcp/mcp-config.ts';
import { createModelsFeature } from './models/index.ts';
import { createPdfFeature } from './pdf/index.ts';
import { pdfConfigFrom } from './pdf/pdf-config.ts';
import { createReceiptsFeature } from './receipts/index.ts';
import { createRequestsFeature } from './requests/index.ts';
import { requestsConfigFrom } from './requests/requests-config.ts';
import { createResponsesFeature } from './responses/index.ts';
import { responsesConfigFrom } from './responses/responses-config.ts';
import { createSystemFeature } from './system/index.ts';
import { createTasksFeature } from './tasks/index.ts';
import { tasksConfigFrom } from './tasks/tasks-config.ts';

/**
 * The feature list: one line per feature, with the settings it reads (`loadConfig` reads them
 * before anything starts; each `<f>-config.ts` declares its part of `deps.config`) and how it is
 * built. Lines are built in order, so a feature another is given comes first and is handed over
 * by name (`(deps, { pdf }) => createJobsFeature(deps, { pdf: pdf.service })`). A contract key
 * no feature owns, or a settings part no line reads, is a compile error (see FeatureList).
 */
export const featureList = new FeatureList<{ signingKeys: SigningKeys }>()
  // The durable task store: long operations (background responses, MCP tasks, A2A skills) run on it.
  .add('tasks', { tasks: tasksConfigFrom }, (deps) => createTasksFeature(deps))
  .add('receipts', {}, (deps, { signingKeys }) => createReceiptsFeature(deps, signingKeys))
  .add('requests', { requests: requestsConfigFrom }, (deps) => createRequestsFeature(deps))
  .add('catalog', { catalog: catalogConfigFrom }, (deps, { receipts, requests }) =>
    createCatalogFeature(deps, { receipts: receipts.receipts, requests: requests.store }),
  )
  .add('blackboard', { blackboard: blackboardConfigFrom }, (deps, { receipts }) => createBlackboardFeature(deps, { receipts: receipts.receipts }))
  .add('pdf', { pdf: pdfConfigFrom }, (deps) => createPdfFeature(deps))
  .add('identity', { identity: identityConfigFrom, limits: limitsConfigFrom }, (deps, { signingKeys, receipts }) =>
    createIdentityFeature(deps, { signingKeys, receipts: receipts.receipts }),
  )
  .add('inference', { responseCache: responseCacheConfigFrom }, (deps, { blackboard, catalog, requests }) =>
    createInferenceFeature(deps, { blackboard: blackboard.service, catalog: catalog.catalog, requests: requests.store }),
  )
  .add('billing', { billing: billingConfigFrom, x402: x402ConfigFrom }, (deps, { inference }) =>
    createBillingFeature(deps, { responseCache: inference.responseCache }),
  )
  .add('jobs', { jobs: jobsConfigFrom }, (deps, { pdf }) => createJobsFeature(deps, { pdf: pdf.service }))
  .add('system', {}, (deps) => createSystemFeature(deps))
  .add('models', {}, (deps) => createModelsFeature(deps))
  .add('discovery', {}, (deps, { tasks }) => createDiscoveryFeature(deps, { tasks: tasks.tasks }))
  .add('responses', { responses: responsesConfigFrom }, (deps, { identity, inference, tasks }) =>
    createResponsesFeature(deps, { responseCache: inference.responseCache, tasks: tasks.tasks, keyWebhooks: identity.keyWebhooks }),
  )
  .add('mcp', { mcp: mcpConfigFrom }, (deps, { tasks }) => createMcpFeature(deps, { tasks: tasks.tasks }));

/** Builds every feature of the list. */
export async function createFeatures(deps: ServerDeps): Promise<Features> {
  // Loaded once: the OAuth keys and the receipt key derive from one secret (generated on first start).
  const signingKeys = await loadSigningKeys(deps.config.identity.signingSecret, deps.config.dataDir);
  if (signingKeys.file)
    deps.log.info({ file: signingKeys.file }, 'signing secret kept in the data directory (generated on first start); set SVC_SIGNING_SECRET so replicas agree');
  return featureList.build(deps, { signingKeys });
}
