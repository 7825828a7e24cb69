import type { ServerDeps } from '../../deps.ts';
import type { Feature } from '../feature.ts';
import type { ResponseCache } from '../inference/index.ts';
import { CreditHoldRenewal } from './credit-hold-renewal.ts';
import { releaseExpiredHolds } from './credit-ledger.ts';

export { holdCommitted } from './credit-ledger.ts';
import { createBillingHandlers } from './handlers.ts';
import { createX402Handlers } from './x402-handlers.ts';

/** How often any replica looks for holds whose server died mid-call. */
const HOLD_SWEEP_MS = 30_000;

/**
 * Billing: the credit and x402 routes, and the housekeeping that renews the holds of calls running
 * here and releases expired ones (a replica that died mid-call).
 */
export function createBillingFeature(
  deps: Pick<ServerDeps, 'config' | 'database' | 'log' | 'models' | 'publicUrls' | 'scheduler' | 'testSeams' | 'usage'>,
  given: { responseCache: ResponseCache },
) {
  const log = deps.log.child({ feature: 'billing' });
  const renewal = new CreditHoldRenewal(deps.database.sequelize, deps.config.billing.holdTtlSeconds);
  deps.scheduler.every('billing.renew-holds', renewal.everyMs, () => renewal.renew());
  deps.scheduler.every('billing.release-expired-holds', HOLD_SWEEP_MS, async () => {
    const released = await releaseExpiredHolds(deps.database.sequelize);
    if (released > 0) log.info({ released }, 'released expired credit holds');
  });
  return { handlers: { ...createBillingHandlers(deps, given.responseCache, renewal), x402: createX402Handlers(deps) } } satisfies Feature<
    'billing' | 'credits' | 'x402'
  >;
}
