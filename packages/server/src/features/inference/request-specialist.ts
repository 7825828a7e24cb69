import type { Principal, RequestSpecialistResponse } from '@svc/schemas';
import type { z } from 'zod';
import type { RequestSpecialistRequest } from '@svc/schemas';
import type { Sequelize } from 'sequelize';
import type { ModelRegistry } from '../models/index.ts';
import type { RequestStore } from '../requests/index.ts';
import { findSpecialist } from './guidance.ts';

/**
 * find_specialist, then a feature request when nothing is good enough. Filing goes through the
 * request store (screening, per-principal limits, replays), so asking twice files once.
 */
export async function requestSpecialist(
  deps: { models: ModelRegistry; sequelize: Sequelize; requests: Pick<RequestStore, 'fileFor'> },
  body: z.output<typeof RequestSpecialistRequest>,
  principal: Pick<Principal, 'kind' | 'id'>,
): Promise<RequestSpecialistResponse> {
  const need = `${body.capability} ${body.task}`;
  const { matches } = await findSpecialist(deps.models, deps.sequelize, need, body.limit, 0);
  const goodEnough = (matches[0]?.score ?? 0) >= body.min_score;
  if (goodEnough) return { matches, good_enough: true, min_score: body.min_score, filed: null };
  const filed = await deps.requests.fileFor(principal, 'feature', {
    capability: body.capability,
    task: body.task,
    use_case: body.use_case,
    ...(body.target_tool !== undefined ? { target_tool: body.target_tool } : {}),
  });
  return { matches, good_enough: false, min_score: body.min_score, filed: { request: filed.receipt, replayed: filed.replayed } };
}
