import { randomBytes } from 'node:crypto';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { ServiceError } from '../service-error.ts';

/** The header a replayed answer carries (Stripe's name). */
export const REPLAYED_HEADER = 'idempotent-replayed';

export interface IdempotencyScope {
  /** Keys are the caller's own: one principal's key never meets another's. */
  principalId: string;
  /** The route the key was used on (`jobs.submit`); a key is bound to one route. */
  routeId: string;
  key: string;
  /** Hash of the request (`requestFingerprint`): the same key with another request is a conflict. */
  fingerprint: string;
}

export interface StoredResponse<B = unknown> {
  status: number;
  body: B;
  headers: Record<string, string>;
}

export interface IdempotencySettings {
  /** How long a key and its stored response are kept (at least 24 h in production). */
  ttlSeconds: number;
  /** How long a claimed key may stay unanswered before a retry may take it over (a crashed process). */
  lockSeconds: number;
}

interface KeyRow {
  fingerprint: string;
  state: 'in_progress' | 'completed';
  locked_until: Date | null;
  response_status: number | null;
  response_body: unknown;
  response_headers: Record<string, string> | null;
}

/**
 * Stripe's idempotency semantics over one table (`svc_idempotency_keys`) for every route that
 * takes an Idempotency-Key:
 * - the first request claims the key, runs, and its 2xx answer is stored in the same transaction
 *   as the work's own writes, so a crash leaves either both or neither;
 * - the same key and request again answers the stored response with `Idempotent-Replayed: true`;
 * - the same key with another request is 409 `idempotency_conflict`;
 * - while the first is still running, a duplicate gets 409 `idempotency_in_progress` (retryable);
 * - a refusal (any error) releases the key, so the caller may retry it once the cause is gone.
 */
export async function runIdempotent<B>(
  sequelize: Sequelize,
  scope: IdempotencyScope,
  settings: IdempotencySettings,
  work: (transaction: Transaction) => Promise<StoredResponse<B>>,
): Promise<StoredResponse<B>> {
  const owner = randomBytes(12).toString('base64url');
  const replay = await claim(sequelize, scope, settings, owner);
  if (replay) return replay as StoredResponse<B>;
  try {
    return await sequelize.transaction(async (transaction) => {
      const answer = await work(transaction);
      await sequelize.query(
        `UPDATE svc_idempotency_keys SET state = 'completed', owner_token = NULL, locked_until = NULL,
           response_status = :status, response_body = :body::jsonb, response_headers = :headers::jsonb
         WHERE principal_id = :principalId AND route_id = :routeId AND idempotency_key = :key AND owner_token = :owner`,
        {
          replacements: { ...keyOf(scope), owner, status: answer.status, body: JSON.stringify(answer.body), headers: JSON.stringify(answer.headers) },
          transaction,
        },
      );
      return answer;
    });
  } catch (error) {
    await sequelize
      .query(
        `DELETE FROM svc_idempotency_keys WHERE principal_id = :principalId AND route_id = :routeId AND idempotency_key = :key AND owner_token = :owner AND state = 'in_progress'`,
        {
          replacements: { ...keyOf(scope), owner },
        },
      )
      .catch(() => {});
    throw error;
  }
}

/** The row's key, as named replacements. */
const keyOf = (scope: IdempotencyScope) => ({ principalId: scope.principalId, routeId: scope.routeId, key: scope.key });

/** Claims the key for `owner`; answers the stored response when the key already has one. */
async function claim(sequelize: Sequelize, scope: IdempotencyScope, settings: IdempotencySettings, owner: string): Promise<StoredResponse | undefined> {
  const key = keyOf(scope);
  // Two tries: the second after dropping an expired key or taking over an abandoned claim.
  for (let attempt = 0; attempt < 2; attempt += 1) {
    const claimed = await sequelize.query(
      `INSERT INTO svc_idempotency_keys (principal_id, route_id, idempotency_key, fingerprint, state, owner_token, locked_until, expires_at)
       VALUES (:principalId, :routeId, :key, :fingerprint, 'in_progress', :owner, now() + make_interval(secs => :lockSeconds), now() + make_interval(secs => :ttlSeconds))
       ON CONFLICT DO NOTHING RETURNING idempotency_key`,
      {
        replacements: { ...key, fingerprint: scope.fingerprint, owner, lockSeconds: settings.lockSeconds, ttlSeconds: settings.ttlSeconds },
        type: QueryTypes.SELECT,
      },
    );
    if (claimed.length > 0) return undefined;
    const [row] = await sequelize.query<KeyRow & { expired: boolean; abandoned: boolean }>(
      `SELECT fingerprint, state, locked_until, response_status, response_body, response_headers,
              expires_at <= now() AS expired, (state = 'in_progress' AND locked_until <= now()) AS abandoned
       FROM svc_idempotency_keys WHERE principal_id = :principalId AND route_id = :routeId AND idempotency_key = :key`,
      { replacements: key, type: QueryTypes.SELECT },
    );
    if (!row) continue; // released between the insert and the read: claim again
    if (row.expired) {
      await sequelize.query(
        `DELETE FROM svc_idempotency_keys WHERE principal_id = :principalId AND route_id = :routeId AND idempotency_key = :key AND expires_at <= now()`,
        {
          replacements: key,
        },
      );
      continue;
    }
    if (row.fingerprint !== scope.fingerprint) {
      throw new ServiceError('idempotency_conflict', 'This Idempotency-Key was already used with a different request body; use a new key for a new request.');
    }
    if (row.state === 'completed') {
      return { status: row.response_status!, body: row.response_body, headers: { ...row.response_headers, [REPLAYED_HEADER]: 'true' } };
    }
    if (row.abandoned) {
      const taken = await sequelize.query(
        `UPDATE svc_idempotency_keys SET owner_token = :owner, locked_until = now() + make_interval(secs => :lockSeconds)
         WHERE principal_id = :principalId AND route_id = :routeId AND idempotency_key = :key AND state = 'in_progress' AND locked_until <= now() RETURNING idempotency_key`,
        { replacements: { ...key, owner, lockSeconds: settings.lockSeconds }, type: QueryTypes.SELECT },
      );
      if (taken.length > 0) return undefined;
    }
    break;
  }
  throw new ServiceError('idempotency_in_progress', 'A request with this Idempotency-Key is still being handled; retry shortly to get its answer.', {
    retryAfterSeconds: 1,
    retryable: true,
  });
}

/** Drops keys past their retention; called from housekeeping. */
export async function pruneIdempotencyKeys(sequelize: Sequelize): Promise<void> {
  await sequelize.query('DELETE FROM svc_idempotency_keys WHERE expires_at <= now()');
}
