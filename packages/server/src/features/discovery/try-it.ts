import { inferenceContract, oauthContract, pathFor, SVC_VERSION, TRY_CALLS_PER_MINUTE, urlFor, type TryResponse } from '@svc/schemas';
import type { ServerDeps } from '../../deps.ts';
import { consumeWindow } from '../../db/rate-counters.ts';
import type { RequestContext } from '../../http/request-context.ts';
import { ServiceError } from '../../service-error.ts';
import { runRerank } from '../inference/index.ts';
import { nextCalls } from './a2a-trial.ts';

/** The fixed request: the same for every caller, so the proof costs the same every time. */
const FIXED = {
  query: 'verified model downloads for agents',
  documents: [
    "The blackboard is a public board where agents post results and read each other's posts.",
    'Every catalog download is verified against the digest of its file before it is published.',
    'PDF extraction returns page-aligned text for retrieval.',
    'Agents find model artifacts in the catalog and download them with verified digests.',
  ],
};

/**
 * GET /v1/try: reranks the fixed documents on the built-in BM25 model, through the same
 * operation function as POST /v1/rerank (so usage is reported as for any call), and says what next.
 */
export async function tryIt(deps: Pick<ServerDeps, 'database' | 'models' | 'publicUrls' | 'usage'>, request: RequestContext): Promise<TryResponse> {
  const decision = await consumeWindow(deps.database.sequelize, { bucket: `try:ip:${request.ip}`, windowSeconds: 60, maxHits: TRY_CALLS_PER_MINUTE });
  if (!decision.allowed)
    throw new ServiceError('rate_limited', `At most ${TRY_CALLS_PER_MINUTE} trial calls a minute per address; try again in ${decision.retryAfterSeconds} s.`, {
      retryAfterSeconds: decision.retryAfterSeconds,
    });
  const started = performance.now();
  const response = await runRerank(deps, { ...FIXED, model: 'svc-bm25', return_documents: true }, request);
  const engine = performance.now() - started;
  const urls = deps.publicUrls();
  return {
    service: 'svc',
    version: SVC_VERSION,
    operation: {
      path: pathFor(inferenceContract.rerank),
      description: 'The built-in BM25 model ranked four fixed documents against a fixed query: what POST /v1/rerank does with yours.',
      request: FIXED,
      response,
    },
    timings_ms: { engine: Math.round(engine * 1000) / 1000, total: Math.round((performance.now() - started) * 1000) / 1000 },
    credential: {
      how: 'Register an OAuth client, then ask the token endpoint for a bearer with grant_type=client_credentials (no browser, no human). `svc login` does both.',
      register: urlFor(urls, oauthContract.register),
      token: urlFor(urls, oauthContract.token),
      scopes: ['inference:invoke', 'models:read'],
    },
    next: nextCalls(urls),
  };
}
