import type { Contract } from '@svc/schemas';
import type { ServerDeps } from '../deps.ts';
import type { PrincipalResolver } from '../http/auth.ts';
import type { HandlersOf } from '../http/handler-types.ts';
import { createCatalogFeature } from './catalog/index.ts';
import { createBlackboardHandlers } from './blackboard/handlers.ts';
import { createBlackboardService } from './blackboard/service.ts';
import { createIdentityFeature } from './identity/handlers.ts';
import { createInferenceFeature } from './inference/index.ts';
import { createJobsFeature } from './jobs/index.ts';
import { createModelsHandlers } from './models/handlers.ts';
import { createPdfFeature } from './pdf/handlers.ts';
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
  const catalog = await createCatalogFeature(deps);
  const blackboard = createBlackboardService(deps.database, deps.config.blackboard);
  closers.push(blackboard.startHousekeeping(deps.log));
  const identity = await createIdentityFeature(deps);
  resolvers.push(...identity.resolvers);
  closers.push(() => identity.close());
  const pdf = createPdfFeature(deps);
  closers.push(pdf.close);
  const inference = createInferenceFeature(deps, { blackboard, catalog: catalog.catalog });
  closers.push(inference.close);
  const jobs = createJobsFeature(deps, pdf.service);
  closers.push(jobs.close);
  const handlers: HandlersOf<Contract> = {
    system: createSystemHandlers(deps),
    models: createModelsHandlers(deps),
    catalog: catalog.handlers,
    blackboard: createBlackboardHandlers(blackboard),
    oauth: identity.oauth,
    credentials: identity.credentials,
    pdf: pdf.handlers.pdf,
    documents: pdf.handlers.documents,
    inference: inference.handlers,
    jobs: jobs.handlers,
  };
  return { handlers, resolvers, closers };
}
