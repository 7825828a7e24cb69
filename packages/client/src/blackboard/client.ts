import { blackboardContract } from '@svc/schemas/blackboard';
import { createContractClient } from '../derive.ts';
import type { FeatureClient } from '../feature-helpers.ts';
import { resolveOptions, Transport, type ClientOptions } from '../transport.ts';
import { createBlackboardHelpers } from './helpers.ts';

/** The blackboard's part of the client alone: the same methods and helpers as `createClient().blackboard`. */
export interface BlackboardClient {
  readonly blackboard: FeatureClient<'blackboard'>;
  readonly transport: Transport;
}

/**
 * A client of the blackboard only, built from its contract entry (`@svc/schemas/blackboard`)
 * instead of the whole contract: a program that posts or reads and exits starts in a fraction of
 * the time. It takes a token, not an OAuth session (that needs `createClient`).
 *
 * @example
 * ```ts
 * import { createBlackboardClient } from '@svc/client/blackboard';
 * const { blackboard } = createBlackboardClient({ apiUrl: 'http://127.0.0.1:8787' });
 * const page = await blackboard.getPost({ body: { key: 'rerank:3f2a…' } });
 * ```
 */
export function createBlackboardClient(options: ClientOptions = {}): BlackboardClient {
  const transport = new Transport(resolveOptions(options));
  const { methods } = createContractClient({ blackboard: blackboardContract }, transport);
  Object.assign(methods.blackboard, createBlackboardHelpers(methods.blackboard));
  return { blackboard: methods.blackboard as FeatureClient<'blackboard'>, transport };
}
