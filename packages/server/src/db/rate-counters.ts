import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';

export interface WindowLimit {
  /** What is counted, e.g. `blackboard:ip:203.0.113.7`. */
  bucket: string;
  /** Length of the fixed window; windows start on multiples of it since the epoch (UTC hours for 3600). */
  windowSeconds: number;
  /** Most hits allowed in one window. */
  maxHits: number;
  /** Units this call adds to the amount (bytes, for example). */
  amount?: number;
  /** Most amount allowed in one window; omitted means unlimited. */
  maxAmount?: number;
}

export interface WindowDecision {
  allowed: boolean;
  bucket: string;
  /** Seconds until the current window ends; what `Retry-After` should say on refusal. */
  retryAfterSeconds: number;
  /** Which cap refused: hits or amount. */
  exhausted?: 'hits' | 'amount';
}

export function windowStart(now: Date, windowSeconds: number): Date {
  const seconds = Math.floor(now.getTime() / 1000);
  return new Date((seconds - (seconds % windowSeconds)) * 1000);
}

/**
 * Counts one hit (and `amount`) in a fixed window, atomically in the database so every replica
 * shares the count: the row is only incremented when the result stays within both caps, and a
 * refusal changes nothing. Pass a transaction to make several windows all-or-nothing.
 */
export async function consumeWindow(
  sequelize: Sequelize,
  limit: WindowLimit,
  options: { now?: Date; transaction?: Transaction } = {},
): Promise<WindowDecision> {
  const now = options.now ?? new Date();
  const start = windowStart(now, limit.windowSeconds);
  const retryAfterSeconds = Math.max(1, Math.ceil((start.getTime() + limit.windowSeconds * 1000 - now.getTime()) / 1000));
  const amount = limit.amount ?? 0;
  const maxAmount = limit.maxAmount ?? Number.MAX_SAFE_INTEGER;
  const refuse = (exhausted: 'hits' | 'amount'): WindowDecision => ({ allowed: false, bucket: limit.bucket, retryAfterSeconds, exhausted });
  if (limit.maxHits < 1) return refuse('hits');
  if (amount > maxAmount) return refuse('amount');
  const rows = await sequelize.query<{ hits: string }>(
    `INSERT INTO svc_rate_counters (bucket, window_start, hits, amount) VALUES (:bucket, :start, 1, :amount)
     ON CONFLICT (bucket, window_start) DO UPDATE
       SET hits = svc_rate_counters.hits + 1, amount = svc_rate_counters.amount + EXCLUDED.amount
       WHERE svc_rate_counters.hits + 1 <= :maxHits AND svc_rate_counters.amount + EXCLUDED.amount <= :maxAmount
     RETURNING hits`,
    { replacements: { bucket: limit.bucket, start, amount, maxHits: limit.maxHits, maxAmount }, type: QueryTypes.SELECT, transaction: options.transaction },
  );
  if (rows.length > 0) return { allowed: true, bucket: limit.bucket, retryAfterSeconds };
  const [current] = await sequelize.query<{ hits: string; amount: string }>(
    'SELECT hits, amount FROM svc_rate_counters WHERE bucket = :bucket AND window_start = :start',
    {
      replacements: { bucket: limit.bucket, start },
      type: QueryTypes.SELECT,
      transaction: options.transaction,
    },
  );
  return refuse(current && Number(current.hits) + 1 > limit.maxHits ? 'hits' : 'amount');
}

/**
 * Drops counters of windows that ended before `before`; called from housekeeping. Rows at the
 * epoch are not windows but standing counters (the blackboard's put-order row) and are kept.
 */
export async function pruneWindows(sequelize: Sequelize, before: Date): Promise<void> {
  await sequelize.query("DELETE FROM svc_rate_counters WHERE window_start < :before AND window_start > 'epoch'::timestamptz", { replacements: { before } });
}
