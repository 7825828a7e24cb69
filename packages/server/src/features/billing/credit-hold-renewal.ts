import type { Sequelize } from 'sequelize';

/** How often holds of calls still running are renewed at most: as the key limiter's concurrency leases. */
const RENEW_EVERY_MS = 20_000;
/**
 * A hold is renewed at most this long after it was taken: a call settles it when it ends, so a
 * hold still here this late was never settled (a bug), and it is left to expire and be swept.
 */
const RENEW_AT_MOST_MS = 6 * 60 * 60_000;

/**
 * The credit holds of calls running in this process, renewed while they run (as the key limiter
 * renews its concurrency leases): a hold expires `ttlSeconds` after its last renewal, so the
 * sweep releases only the holds of a replica that died, never one whose call is still streaming.
 * Renewed every 20 s, or every third of the TTL when that is shorter, so a hold is renewed at
 * least twice before it could expire.
 */
export class CreditHoldRenewal {
  readonly #sequelize: Sequelize;
  readonly #ttlSeconds: number;
  /** Hold id -> when it was taken (ms). */
  readonly #held = new Map<string, number>();

  constructor(sequelize: Sequelize, ttlSeconds: number) {
    this.#sequelize = sequelize;
    this.#ttlSeconds = ttlSeconds;
  }

  /** The period housekeeping renews at. */
  get everyMs(): number {
    return Math.min(RENEW_EVERY_MS, Math.floor((this.#ttlSeconds * 1000) / 3));
  }

  track(holdId: string): void {
    this.#held.set(holdId, Date.now());
  }

  /** The call settled its hold (committed or released): it is renewed no more. */
  untrack(holdId: string): void {
    this.#held.delete(holdId);
  }

  /** Housekeeping: pushes the expiry of every hold still running here `ttlSeconds` ahead. */
  async renew(): Promise<void> {
    const oldest = Date.now() - RENEW_AT_MOST_MS;
    for (const [id, since] of this.#held) if (since < oldest) this.#held.delete(id);
    if (this.#held.size === 0) return;
    await this.#sequelize.query(`UPDATE billing_holds SET expires_at = now() + make_interval(secs => :ttl) WHERE id IN (:ids) AND status = 'held'`, {
      replacements: { ttl: this.#ttlSeconds, ids: [...this.#held.keys()] },
    });
  }
}
