import type { Sequelize, Transaction } from 'sequelize';
import { windowStart } from '../../db/rate-counters.ts';
import { ServiceError } from '../../service-error.ts';
import type { BlackboardConfig } from './blackboard-config.ts';
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

function windowsFor(settings: BlackboardConfig, subject: AdmissionSubject, ipOnly: boolean): NamedWindow[] {
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

/** A put's admission windows, as `svc_blackboard_put_batch` takes them (bytes count everywhere but the per-address window). */
export interface PutWindows {
  named: NamedWindow[];
  sql: Array<{ bucket: string; amount: number; max_hits: number; max_amount: number }>;
}

export function putWindows(settings: BlackboardConfig, subject: AdmissionSubject): PutWindows {
  const named = windowsFor(settings, subject, false);
  return {
    named,
    sql: named.map((window) => ({
      bucket: window.bucket,
      amount: window.name === 'ip' ? 0 : subject.bytes,
      max_hits: window.maxHits,
      max_amount: window.maxAmount,
    })),
  };
}

/** Throws the 429 naming the exhausted window (`blackboard_admission:channel_posts`), if any. */
export function checkAdmission(
  settings: BlackboardConfig,
  windows: NamedWindow[],
  counted: Array<{ bucket: string; hits: string | number; amount: string | number }>,
): void {
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
    throw new ServiceError(
      `blackboard_admission:${name}_${unit}`,
      `The ${name} admission window is full (${cap} ${unit} per ${settings.windowSeconds} s window); retry after ${retryAfterSeconds} s.`,
      {
        retryAfterSeconds,
        retryable: true,
      },
    );
  }
}

/**
 * Counts a replay against the per-address window only (replays consume no admission, but still
 * meet the per-address limiter), in the caller's transaction: incremented unconditionally, and a
 * replay over the cap throws, which rolls the increment back with the transaction.
 */
export async function admitReplay(sequelize: Sequelize, settings: BlackboardConfig, subject: AdmissionSubject, transaction: Transaction): Promise<void> {
  const windows = windowsFor(settings, subject, true);
  const counted = await selectRows<{ bucket: string; hits: string; amount: string }>(
    sequelize,
    `INSERT INTO svc_rate_counters (bucket, window_start, hits, amount) VALUES (:bucket, :windowStart, 1, 0)
     ON CONFLICT (bucket, window_start) DO UPDATE SET hits = svc_rate_counters.hits + 1
     RETURNING bucket, hits, amount`,
    { bucket: windows[0]!.bucket, windowStart: windowStart(new Date(), settings.windowSeconds) },
    transaction,
  );
  checkAdmission(settings, windows, counted);
}
