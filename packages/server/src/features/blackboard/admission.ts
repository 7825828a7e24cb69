import type { Sequelize, Transaction } from 'sequelize';
import { consumeWindow, type WindowLimit } from '../../db/rate-counters.ts';
import { ServiceError } from '../../http/service-error.ts';
import type { BlackboardSettings } from './settings.ts';

export interface AdmissionSubject {
  ip: string;
  /** Hash of the bearer (or of the address when there is none): the principal for admission. */
  keyId: string;
  channelKey: string;
  bytes: number;
}

interface NamedWindow {
  name: string;
  limit: WindowLimit;
}

/** The windows of one put, in a fixed order so concurrent transactions lock counters alike and cannot deadlock. */
function windowsFor(settings: BlackboardSettings, subject: AdmissionSubject, ipOnly: boolean): NamedWindow[] {
  const windowSeconds = settings.windowSeconds;
  const ip: NamedWindow = { name: 'ip', limit: { bucket: `blackboard:ip:${subject.ip}`, windowSeconds, maxHits: settings.ipPuts } };
  if (ipOnly) return [ip];
  return [
    ip,
    { name: 'channel', limit: { bucket: `blackboard:channel:${subject.channelKey}`, windowSeconds, maxHits: settings.channelPosts, amount: subject.bytes, maxAmount: settings.channelBytes } },
    { name: 'principal', limit: { bucket: `blackboard:principal:${subject.keyId}`, windowSeconds, maxHits: settings.principalPosts, amount: subject.bytes, maxAmount: settings.principalBytes } },
    { name: 'global', limit: { bucket: 'blackboard:global', windowSeconds, maxHits: settings.globalPosts, amount: subject.bytes, maxAmount: settings.globalBytes } },
  ];
}

/**
 * Counts a put against every admission window inside the caller's transaction. The first
 * window that refuses throws a 429 naming it (`blackboard_admission:channel_posts`); the caller's
 * transaction then rolls back, so windows that had counted the put forget it: all or nothing.
 * `ipOnly` is for replays, which consume no admission but still meet the per-address limiter.
 */
export async function admitPut(sequelize: Sequelize, settings: BlackboardSettings, subject: AdmissionSubject, transaction: Transaction, options: { ipOnly?: boolean } = {}): Promise<void> {
  for (const window of windowsFor(settings, subject, options.ipOnly ?? false)) {
    const decision = await consumeWindow(sequelize, window.limit, { transaction });
    if (decision.allowed) continue;
    const unit = window.name === 'ip' ? 'puts' : decision.exhausted === 'amount' ? 'bytes' : 'posts';
    const cap = unit === 'bytes' ? window.limit.maxAmount : window.limit.maxHits;
    throw new ServiceError(`blackboard_admission:${window.name}_${unit}`, `The ${window.name} admission window is full (${cap} ${unit} per ${settings.windowSeconds} s window); retry after ${decision.retryAfterSeconds} s.`, {
      retryAfterSeconds: decision.retryAfterSeconds,
      retryable: true,
    });
  }
}
