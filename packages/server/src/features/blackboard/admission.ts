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

export interface CounterUpsert {
  /** `INSERT ... ON CONFLICT DO UPDATE ... RETURNING bucket, hits, amount` over every row of the put. */
  sql: string;
  /** `VALUES (bucket, max_hits, max_amount), ...`: the caps, so SQL can skip the insert of a refused put. */
  capsSql(): string;
  windows: NamedWindow[];
}

/**
 * The counter upsert of a put: every admission window (the same `svc_rate_counters` rows and
 * fixed windows as `consumeWindow`), batched into one statement because it runs while puts are
 * serialised. Rows are incremented unconditionally; a put over any cap then rolls its whole
 * transaction back (put-item.ts raises in the same statement; a replay's transaction throws
 * `checkAdmission`'s refusal), so no window keeps a refused put: all or nothing, exactly,
 * across replicas. Rows lock in a fixed order starting with the put-order row, so two puts never
 * deadlock. The put-order row's amount holds the last created_at (epoch ms) handed out: under
 * its lock each put takes a later one, so created_at grows in commit order.
 * `ipOnly` is for replays, which consume no admission but still meet the per-address limiter.
 */
export function counterUpsert(settings: BlackboardSettings, subject: AdmissionSubject, bind: (value: unknown) => string, options: { ipOnly?: boolean } = {}): CounterUpsert {
  const start = windowStart(new Date(), settings.windowSeconds);
  const windows = windowsFor(settings, subject, options.ipOnly ?? false);
  const values = [
    // A fresh put-order row (first put, or after someone pruned it) starts after every stored item.
    ...(options.ipOnly
      ? []
      : [
          `(${bind(ORDER_BUCKET)}, 'epoch'::timestamptz, 1, greatest(floor(extract(epoch FROM clock_timestamp()) * 1000), coalesce(floor(extract(epoch FROM (SELECT max(created_at) FROM blackboard_items)) * 1000) + 1, 0))::bigint)`,
        ]),
    ...windows.map((window) => `(${bind(window.bucket)}, ${bind(start)}::timestamptz, 1, ${bind(window.name === 'ip' ? 0 : subject.bytes)}::bigint)`),
  ];
  const sql = `INSERT INTO svc_rate_counters (bucket, window_start, hits, amount) VALUES ${values.join(', ')}
     ON CONFLICT (bucket, window_start) DO UPDATE SET
       hits = svc_rate_counters.hits + 1,
       amount = CASE WHEN svc_rate_counters.bucket = ${bind(ORDER_BUCKET)}
         THEN greatest(svc_rate_counters.amount + 1, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)
         ELSE svc_rate_counters.amount + EXCLUDED.amount END
     RETURNING bucket, hits, amount`;
  const capsSql = () => `VALUES ${windows.map((window) => `(${bind(window.bucket)}, ${bind(window.maxHits)}::bigint, ${bind(window.maxAmount)}::bigint)`).join(', ')}`;
  return { sql, capsSql, windows };
}

/** The put-order row's stamp after the upsert, as epoch ms. */
export function orderStampSql(countersCte: string): string {
  return `(SELECT amount FROM ${countersCte} WHERE bucket = '${ORDER_BUCKET}')`;
}

/** Throws the 429 naming the exhausted window (`blackboard_admission:channel_posts`), if any. */
export function checkAdmission(settings: BlackboardSettings, windows: NamedWindow[], counted: Array<{ bucket: string; hits: string | number; amount: string | number }>): void {
  const now = new Date();
  const start = windowStart(now, settings.windowSeconds);
  const retryAfterSeconds = Math.max(1, Math.ceil((start.getTime() + settings.windowSeconds * 1000 - now.getTime()) / 1000));
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

/** Counts a replay against the per-address window only (its own statement, in the caller's transaction). */
export async function admitReplay(sequelize: Sequelize, settings: BlackboardSettings, subject: AdmissionSubject, transaction: Transaction): Promise<void> {
  const params: unknown[] = [];
  const upsert = counterUpsert(settings, subject, (value) => (params.push(value), `$${params.length}`), { ipOnly: true });
  checkAdmission(settings, upsert.windows, await selectRows(sequelize, upsert.sql, params, transaction));
}
