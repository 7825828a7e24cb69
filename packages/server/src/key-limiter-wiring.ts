import type { ServerDeps } from './deps.ts';
import { holdCommitted } from './features/billing/index.ts';
import { KeyLimiter } from './http/key-limits.ts';

/**
 * The limiter of keys and principal kinds (docs/limits.md), given the configured defaults, the
 * tokens each call reports, and its housekeeping: renewing this process's leases on requests in
 * flight (they expire 60 s after a replica dies) and pruning dead leases and counted keys.
 */
export function createKeyLimiter(deps: ServerDeps): KeyLimiter {
  const { database, log, scheduler, usage, config } = deps;
  const limiter = new KeyLimiter(database.sequelize, config.limits.byKind, (error) => log.error({ err: error }, 'a key limit count failed'), {
    // The credit-funded chat keeps its answers in its holds: a committed one is replayed, not run again.
    'credits.chat': (scope) => holdCommitted(database.sequelize, scope.principalId, scope.key),
  });
  usage.subscribe((event) => limiter.recordTokens(event, event.usage.total_tokens));
  scheduler.every('key-limits.renew-leases', 20_000, () => limiter.renewLeases());
  scheduler.every('key-limits.prune', 10 * 60_000, () => limiter.prune());
  return limiter;
}
