import type { Sequelize, Transaction } from 'sequelize';
import { windowStart } from '../../db/rate-counters.ts';
import { ServiceError } from '../../http/service-error.ts';
import type { BlackboardSettings } from './settings.ts';
import { selectRows } from './sql.ts';

export interface AdmissionSubject {
  ip: string;
  /** Hash of the bearer (or of the address when there is none): the principal for admission. */
  keyId: string;
  channelKey: string;
  bytes: number;
}

interface NamedWindow {
  name: 'ip' | 'channel' | 'principal' | 'global';
  bucket: string;
  maxHits: number;
  maxAmount: number;
}

/**
 * A counter row every put locks first, whatever the hour: it serialises puts so `created_at`
 * grows in commit order (a poller never misses a late commit), also across an hour boundary
 * where the global window's row changes. It lives beside the windows, at window_start 0.
 */
const ORDER_BUCKET = 'blackboard:put-order';

function windowsFor(settings: BlackboardSettings, subject: AdmissionSubject, ipOnly: boolean): NamedWindow[] {
  const unlimited = Number.MAX_SAFE_INTEGER;
  const ip: NamedWindow = { name: 'ip', bucket: `blackboard:ip:${subject.ip}`, maxHits: settings.ipPuts, maxAmount: unlimited };
  if (ipOnly) return [ip];
  return [
    { name: 'global', bucket: 'blackboard:global', maxHits: settings.globalPosts, maxAmount: settings.globalBytes },
    ip,
    { name: 'channel', bucket: `blackboard:channel:${subject.channelKey}`, maxHits: settings.channelPosts, maxAmount: settings.channelBytes },
    { name: 'principal', bucket: `blackboard:principal:${subject.keyId}`, maxHits: settings.principalPosts, maxAmount: settings.principalBytes },
  ];
}

/** Which refusal to name when several windows are full at once: the narrowest first. */
const REPORT_ORDER: ReadonlyArray<NamedWindow['name']> = ['ip', 'channel', 'principal', 'global'];

/**
 * Counts a put against every admission window in one statement inside the caller's transaction
 * (the same `svc_rate_counters` rows and fixed windows as `consumeWindow`, batched because each
 * round trip here is spent while holding the global counter's lock). Every row is incremented,
 * then checked; when any window is over its cap the put is refused with a 429 naming it
 * (`blackboard_admission:channel_posts`) and the caller's transaction rolls back, so no window
 * keeps the refused put: all or nothing, exactly, across replicas.
 *
 * Rows lock in a fixed order starting with the put-order row, so two puts never deadlock.
 * `ipOnly` is for replays, which consume no admission but still meet the per-address limiter.
 */
export async function admitPut(sequelize: Sequelize, settings: BlackboardSettings, subject: AdmissionSubject, transaction: Transaction, options: { ipOnly?: boolean } = {}): Promise<void> {
  const now = new Date();
  const start = windowStart(now, settings.windowSeconds);
  const retryAfterSeconds = Math.max(1, Math.ceil((start.getTime() + settings.windowSeconds * 1000 - now.getTime()) / 1000));
  const windows = windowsFor(settings, subject, options.ipOnly ?? false);
  const rows: Array<{ bucket: string; start: Date; amount: number }> = [
    ...(options.ipOnly ? [] : [{ bucket: ORDER_BUCKET, start: new Date(0), amount: 0 }]),
    ...windows.map((window) => ({ bucket: window.bucket, start, amount: window.name === 'ip' ? 0 : subject.bytes })),
  ];
  const bind: unknown[] = [];
  const values = rows.map((row) => {
    bind.push(row.bucket, row.start, row.amount);
    return `($${bind.length - 2}, $${bind.length - 1}::timestamptz, 1, $${bind.length}::bigint)`;
  });
  const counted = await selectRows<{ bucket: string; hits: string; amount: string }>(
    sequelize,
    `INSERT INTO svc_rate_counters (bucket, window_start, hits, amount) VALUES ${values.join(', ')}
     ON CONFLICT (bucket, window_start) DO UPDATE SET hits = svc_rate_counters.hits + 1, amount = svc_rate_counters.amount + EXCLUDED.amount
     RETURNING bucket, hits, amount`,
    bind,
    transaction,
  );
  const byBucket = new Map(counted.map((row) => [row.bucket, row]));
  for (const name of REPORT_ORDER) {
    const window = windows.find((candidate) => candidate.name === name);
    const row = window && byBucket.get(window.bucket);
    if (!window || !row) continue;
    const overHits = Number(row.hits) > window.maxHits;
    const overBytes = Number(row.amount) > window.maxAmount;
    if (!overHits && !overBytes) continue;
    const unit = name === 'ip' ? 'puts' : overHits ? 'posts' : 'bytes';
    const cap = unit === 'bytes' ? window.maxAmount : window.maxHits;
    throw new ServiceError(`blackboard_admission:${name}_${unit}`, `The ${name} admission window is full (${cap} ${unit} per ${settings.windowSeconds} s window); retry after ${retryAfterSeconds} s.`, {
      retryAfterSeconds,
      retryable: true,
    });
  }
}
