import type { Contract } from '@svc/schemas';
import type { ServerDeps } from '../deps.ts';
import type { PrincipalResolver } from '../http/auth.ts';
import type { HandlersOf } from '../http/handler-types.ts';
import { createCatalogFeature } from './catalog/index.ts';
import { createBillingFeature } from './billing/index.ts';
import { createBlackboardHandlers } from './blackboard/handlers.ts';
import { createBlackboardService } from './blackboard/service.ts';
import { createDiscoveryHandlers } from './discovery/handlers.ts';
import { createIdentityFeature } from './identity/handlers.ts';
import { createInferenceFeature } from './inference/index.ts';
import { loadSigningKeys } from './identity/signing-keys.ts';
import { createJobsFeature } from './jobs/index.ts';
import { createModelsHandlers } from './models/handlers.ts';
import { createPdfFeature } from './pdf/handlers.ts';
import { createReceiptsFeature } from './receipts/index.ts';
import { createRequestsFeature } from './requests/index.ts';
import { createSystemHandlers } from './system/handlers.ts';

export interface Features {
  handlers: HandlersOf<Contract>;
  /** Credential resolvers features add (the operator's is built in). */
  resolvers: PrincipalResolver[];
  /** Background work to stop on shutdown, in reverse order of start. */
  closers: Array<() => Promise<void>>;
}

/**
 * Builds every feature. A feature that owns routes adds its handlers under its contract key;
 * the HandlersOf type makes a missing one a compile error.
 */
export async function createFeatures(deps: ServerDeps): Promise<Features> {
  const resolvers: PrincipalResolver[] = [];
  const closers: Array<() => Promise<void>> = [];
  // Loaded once: the OAuth keys and the receipt key derive from one secret (generated on first start).
  const signingKeys = await loadSigningKeys(deps.config.identity.signingSecret, deps.config.dataDir);
  if (signingKeys.file) deps.log.info({ file: signingKeys.file }, 'signing secret kept in the data directory (generated on first start); set SVC_SIGNING_SECRET so replicas agree');
  const receipts = await createReceiptsFeature(deps, signingKeys);
  const requests = createRequestsFeature(deps);
  const catalog = await createCatalogFeature(deps, receipts.receipts, requests.store);
  const blackboard = createBlackboardService(deps.database, deps.config.blackboard, receipts.receipts);
  closers.push(blackboard.startHousekeeping(deps.log));
  const identity = await createIdentityFeature(deps, signingKeys, receipts.receipts);
  resolvers.push(...identity.resolvers);
  const pdf = createPdfFeature(deps);
  closers.push(pdf.close);
  const inference = createInferenceFeature(deps, { blackboard, catalog: catalog.catalog, requests: requests.store });
  closers.push(inference.close);
  const billing = createBillingFeature(deps);
  const jobs = createJobsFeature(deps, pdf.service);
  closers.push(jobs.close);
  const system = createSystemHandlers(deps);
  const handlers: HandlersOf<Contract> = {
    system: system.handlers,
    models: createModelsHandlers(deps),
    catalog: catalog.handlers,
    blackboard: createBlackboardHandlers(blackboard),
    oauth: identity.oauth,
    credentials: identity.credentials,
    pdf: pdf.handlers.pdf,
    documents: pdf.handlers.documents,
    inference: inference.handlers,
    billing: billing.handlers.billing,
    credits: billing.handlers.credits,
    receipts: receipts.handlers,
    requests: requests.handlers,
    discovery: createDiscoveryHandlers(deps),
    x402: billing.handlers.x402,
    jobs: jobs.handlers,
  };
  return { handlers, resolvers, closers };
}
