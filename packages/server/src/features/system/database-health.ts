import type { HealthResponse } from '@svc/schemas';
import type { Database } from '../../db/database.ts';

type DatabaseHealth = HealthResponse['database'];

/** How old a check /healthz may answer with; an older one is refreshed in the background. */
const MAX_AGE_MS = 1_000;

/**
 * Database reachability, checked at most once per second whatever the probe rate. Liveness
 * (`/healthz`) answers from the latest check and never queues behind the database: on the
 * embedded database every query shares one session, so a ping per probe waited behind whatever
 * callers were running, and a liveness probe measured the database's queue instead of the
 * process. Readiness (`/readyz`) waits for a check of its own, joining one in flight.
 *
 * A slow ping is not a failure: a database busy with a thousand queued queries is up, and calling
 * it unreachable after a fixed time would fail liveness exactly under load. Until a check comes
 * back, the latest result stands and its `age_ms` grows, which is what a monitor should alert on.
 */
export function createDatabaseHealthCheck(database: Pick<Database, 'ping' | 'kind'>) {
  let latest: { at: number; health: DatabaseHealth } | undefined;
  let inFlight: Promise<DatabaseHealth> | undefined;

  const check = async (): Promise<DatabaseHealth> => {
    try {
      const latency = await database.ping();
      return { status: 'ok', kind: database.kind, latency_ms: Math.round(latency * 10) / 10, age_ms: 0 };
    } catch {
      return { status: 'unreachable', kind: database.kind, latency_ms: 0, age_ms: 0 };
    }
  };

  const refresh = (): Promise<DatabaseHealth> => {
    inFlight ??= check().then((health) => {
      latest = { at: performance.now(), health };
      inFlight = undefined;
      return health;
    });
    return inFlight;
  };

  return {
    /** The latest check (waiting only for the first one), with its age; starts a refresh when stale. */
    async latest(): Promise<DatabaseHealth> {
      if (!latest) return refresh();
      const age = performance.now() - latest.at;
      if (age > MAX_AGE_MS) void refresh();
      return { ...latest.health, age_ms: Math.round(age) };
    },
    /** A check made now (or the one in flight). */
    fresh: refresh,
  };
}
