import { randomBytes } from 'node:crypto';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { addKeyUsage } from '../identity/index.ts';

export type LedgerKind = 'grant' | 'hold' | 'commit' | 'release' | 'refund';

/**
 * Moves credits on one account and writes the ledger row in the caller's transaction, so a
 * balance change never exists without its row. The account's CHECKs refuse a balance below
 * zero; callers that may hit one say so in their WHERE (`guard`) and get `false` back.
 */
async function move(
  sequelize: Sequelize,
  transaction: Transaction,
  movement: { principalId: string; kind: LedgerKind; spendable: number; reserved: number; reference: string; guardSpendable?: number },
): Promise<boolean> {
  const replacements = { principal: movement.principalId, spendable: movement.spendable, reserved: movement.reserved, guard: movement.guardSpendable ?? 0 };
  // Only a grant may create the account. Every other move updates an existing one (PostgreSQL checks
  // an INSERT's row before ON CONFLICT, so a negative delta cannot go through the upsert); a guarded
  // move (a hold) also needs enough spendable credit.
  const rows =
    movement.kind !== 'grant'
      ? await sequelize.query(
          `UPDATE billing_accounts SET spendable = spendable + :spendable, reserved = reserved + :reserved, updated_at = now()
           WHERE principal_id = :principal AND spendable >= :guard RETURNING spendable`,
          { replacements, type: QueryTypes.SELECT, transaction },
        )
      : await sequelize.query(
          `INSERT INTO billing_accounts (principal_id, spendable, reserved) VALUES (:principal, :spendable, :reserved)
           ON CONFLICT (principal_id) DO UPDATE SET spendable = billing_accounts.spendable + :spendable, reserved = billing_accounts.reserved + :reserved, updated_at = now()
           RETURNING spendable`,
          { replacements, type: QueryTypes.SELECT, transaction },
        );
  if (rows.length === 0) return false;
  await sequelize.query(
    'INSERT INTO billing_ledger (principal_id, kind, spendable_delta, reserved_delta, reference) VALUES (:principal, :kind, :spendable, :reserved, :reference)',
    {
      replacements: {
        principal: movement.principalId,
        kind: movement.kind,
        spendable: movement.spendable,
        reserved: movement.reserved,
        reference: movement.reference,
      },
      transaction,
    },
  );
  return true;
}

export interface Balance {
  spendable: number;
  reserved: number;
}

export async function balanceOf(sequelize: Sequelize, principalId: string, transaction?: Transaction): Promise<Balance> {
  const [row] = await sequelize.query<{ spendable: string; reserved: string }>(
    'SELECT spendable, reserved FROM billing_accounts WHERE principal_id = :principal',
    {
      replacements: { principal: principalId },
      type: QueryTypes.SELECT,
      transaction,
    },
  );
  return { spendable: Number(row?.spendable ?? 0), reserved: Number(row?.reserved ?? 0) };
}

export async function grantCredits(sequelize: Sequelize, transaction: Transaction, principalId: string, credits: number, reference: string): Promise<void> {
  await move(sequelize, transaction, { principalId, kind: 'grant', spendable: credits, reserved: 0, reference });
}

/** Takes back up to `credits` of what is still spendable; answers how many were taken. */
export async function takeBackCredits(
  sequelize: Sequelize,
  transaction: Transaction,
  principalId: string,
  credits: number,
  reference: string,
): Promise<number> {
  const [row] = await sequelize.query<{ spendable: string }>('SELECT spendable FROM billing_accounts WHERE principal_id = :principal FOR UPDATE', {
    replacements: { principal: principalId },
    type: QueryTypes.SELECT,
    transaction,
  });
  const taken = Math.min(credits, Number(row?.spendable ?? 0));
  if (taken > 0) await move(sequelize, transaction, { principalId, kind: 'refund', spendable: -taken, reserved: 0, reference });
  return taken;
}

export type HoldDecision =
  | { kind: 'held'; holdId: string }
  | { kind: 'replay'; result: unknown }
  | { kind: 'in_progress' }
  | { kind: 'conflict' }
  | { kind: 'exhausted'; spendable: number }
  | { kind: 'capped'; period: CapPeriod; cap: number; retryAfterMs: number };

export type CapPeriod = 'day' | 'month';

/**
 * A key's (or principal's) credit caps: what it may draw per UTC day and calendar month, counted
 * when a hold is taken and given back when the hold is released, so failed calls cost no share.
 */
export interface CreditCaps {
  subject: string;
  perDay?: number;
  perMonth?: number;
}

/** Where the current UTC day and month began, and when the next ones begin. */
export function capPeriods(now: Date): Record<CapPeriod, { start: Date; end: Date }> {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const d = now.getUTCDate();
  return {
    day: { start: new Date(Date.UTC(y, m, d)), end: new Date(Date.UTC(y, m, d + 1)) },
    month: { start: new Date(Date.UTC(y, m, 1)), end: new Date(Date.UTC(y, m + 1, 1)) },
  };
}

/** Adds `credits` to the period's draws unless that would pass the cap; false when it would. */
async function drawWithinCap(
  sequelize: Sequelize,
  transaction: Transaction,
  draw: { subject: string; period: CapPeriod; start: Date; credits: number; cap: number },
): Promise<boolean> {
  const rows = await sequelize.query(
    `INSERT INTO svc_limit_credit_draws (subject, period, period_start, credits) SELECT :subject, :period, :start, :credits WHERE :credits <= :cap
     ON CONFLICT (subject, period, period_start) DO UPDATE SET credits = svc_limit_credit_draws.credits + EXCLUDED.credits
       WHERE svc_limit_credit_draws.credits + EXCLUDED.credits <= :cap
     RETURNING credits`,
    { replacements: draw, type: QueryTypes.SELECT, transaction },
  );
  return rows.length > 0;
}

class CappedSignal extends Error {
  readonly period: CapPeriod;
  readonly cap: number;
  /** Until the period ends, in milliseconds (the refusal's `retry-after-ms`). */
  readonly retryAfterMs: number;
  constructor(period: CapPeriod, cap: number, retryAfterMs: number) {
    super('credit cap reached');
    this.period = period;
    this.cap = cap;
    this.retryAfterMs = retryAfterMs;
  }
}

const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString('base64url')}`;

/**
 * Reserves credits for one call under its Idempotency-Key, atomically. A key already committed
 * answers its stored result; one still held is in progress; one whose earlier try was released
 * (failed, disconnected) is held again, so a retry after a failure runs and is charged once. With
 * too little spendable credit nothing is written.
 */
export async function holdCredits(
  sequelize: Sequelize,
  call: {
    principalId: string;
    idempotencyKey: string;
    fingerprint: string;
    credits: number;
    ttlSeconds: number;
    /** The developer key making the call: its receipt and usage name it. */
    credentialId?: string;
    caps?: CreditCaps;
  },
): Promise<HoldDecision> {
  const now = new Date();
  const periods = capPeriods(now);
  const caps = call.caps;
  const capDay = caps?.perDay !== undefined ? periods.day.start : null;
  const capMonth = caps?.perMonth !== undefined ? periods.month.start : null;
  const attempt = () =>
    sequelize.transaction(async (transaction): Promise<HoldDecision> => {
      const fresh = newId('hold');
      const inserted = await sequelize.query<{ id: string }>(
        `INSERT INTO billing_holds (id, principal_id, idempotency_key, fingerprint, status, credits, expires_at, credential_id, cap_subject, cap_day, cap_month)
         VALUES (:id, :principal, :key, :fingerprint, 'held', :credits, now() + make_interval(secs => :ttl), :credentialId, :capSubject, :capDay, :capMonth)
         ON CONFLICT (principal_id, idempotency_key) DO NOTHING RETURNING id`,
        {
          replacements: {
            id: fresh,
            principal: call.principalId,
            key: call.idempotencyKey,
            fingerprint: call.fingerprint,
            credits: call.credits,
            ttl: call.ttlSeconds,
            credentialId: call.credentialId ?? null,
            capSubject: caps?.subject ?? null,
            capDay,
            capMonth,
          },
          type: QueryTypes.SELECT,
          transaction,
        },
      );
      let holdId = inserted[0]?.id;
      if (!holdId) {
        const [existing] = await sequelize.query<{ id: string; fingerprint: string; status: string; result: string | null }>(
          'SELECT id, fingerprint, status, result FROM billing_holds WHERE principal_id = :principal AND idempotency_key = :key FOR UPDATE',
          { replacements: { principal: call.principalId, key: call.idempotencyKey }, type: QueryTypes.SELECT, transaction },
        );
        if (!existing) throw new Error('hold vanished under its lock');
        if (existing.fingerprint !== call.fingerprint) return { kind: 'conflict' };
        if (existing.status === 'committed') return { kind: 'replay', result: existing.result === null ? null : JSON.parse(existing.result) };
        if (existing.status === 'held') return { kind: 'in_progress' };
        // A retry after a release is held again, and draws on the caps of its own day and month.
        await sequelize.query(
          `UPDATE billing_holds SET status = 'held', finished_at = NULL, expires_at = now() + make_interval(secs => :ttl),
             credential_id = :credentialId, cap_subject = :capSubject, cap_day = :capDay, cap_month = :capMonth WHERE id = :id`,
          {
            replacements: {
              id: existing.id,
              ttl: call.ttlSeconds,
              credentialId: call.credentialId ?? null,
              capSubject: caps?.subject ?? null,
              capDay,
              capMonth,
            },
            transaction,
          },
        );
        holdId = existing.id;
      }
      const moved = await move(sequelize, transaction, {
        principalId: call.principalId,
        kind: 'hold',
        spendable: -call.credits,
        reserved: call.credits,
        reference: holdId,
        guardSpendable: call.credits,
      });
      if (!moved) {
        // Roll the hold row back with the transaction: a refused call leaves nothing behind.
        // Inside the transaction: the embedded database has one connection, and this one holds it.
        const balance = await balanceOf(sequelize, call.principalId, transaction);
        throw new ExhaustedSignal(balance.spendable);
      }
      for (const period of ['day', 'month'] as const) {
        const cap = period === 'day' ? caps?.perDay : caps?.perMonth;
        if (caps === undefined || cap === undefined) continue;
        const within = await drawWithinCap(sequelize, transaction, { subject: caps.subject, period, start: periods[period].start, credits: call.credits, cap });
        if (!within) throw new CappedSignal(period, cap, periods[period].end.getTime() - now.getTime());
      }
      return { kind: 'held', holdId };
    });
  try {
    return await attempt();
  } catch (error) {
    if (error instanceof ExhaustedSignal) return { kind: 'exhausted', spendable: error.spendable };
    if (error instanceof CappedSignal) return { kind: 'capped', period: error.period, cap: error.cap, retryAfterMs: error.retryAfterMs };
    throw error;
  }
}

class ExhaustedSignal extends Error {
  readonly spendable: number;
  constructor(spendable: number) {
    super('credits exhausted');
    this.spendable = spendable;
  }
}

export interface ReceiptFacts {
  operation: string;
  model: string;
  requestId: string;
  usage: unknown;
}

/**
 * Spends a held credit: the hold becomes committed with the answer to replay, and an immutable
 * receipt is written. A hold that was released while its call still ran (the sweep took it: its
 * replica could not renew it for longer than its TTL) is charged now, as the call was delivered:
 * the credits come from the spendable balance, and the caps take the draw its release gave back,
 * so the ledger stays exact. When the balance no longer covers it, nothing is written and the
 * answer is `not_charged` (the caller logs it as an error: a call delivered and not charged).
 * `not_held`: the hold was settled already (committed, or held again by a retry).
 */
export async function commitHold(
  sequelize: Sequelize,
  holdId: string,
  result: unknown,
  facts: ReceiptFacts,
): Promise<'committed' | 'not_held' | 'not_charged'> {
  return sequelize
    .transaction(async (transaction) => {
      type Hold = { principal_id: string; idempotency_key: string; credits: number; credential_id: string | null };
      const settle = (from: 'held' | 'released', returning = '') =>
        sequelize.query<Hold & { cap_subject: string | null; cap_day: Date | null; cap_month: Date | null }>(
          `UPDATE billing_holds SET status = 'committed', result = :result, finished_at = now() WHERE id = :id AND status = :from
         RETURNING principal_id, idempotency_key, credits, credential_id${returning}`,
          { replacements: { id: holdId, result: JSON.stringify(result), from }, type: QueryTypes.SELECT, transaction },
        );
      let [hold] = await settle('held');
      if (hold) {
        await move(sequelize, transaction, { principalId: hold.principal_id, kind: 'commit', spendable: 0, reserved: -hold.credits, reference: holdId });
      } else {
        const [released] = await settle('released', ', cap_subject, cap_day, cap_month');
        if (!released) return 'not_held';
        const charged = await move(sequelize, transaction, {
          principalId: released.principal_id,
          kind: 'commit',
          spendable: -released.credits,
          reserved: 0,
          reference: holdId,
          guardSpendable: released.credits,
        });
        if (!charged) throw new NotChargedSignal();
        for (const [period, start] of [
          ['day', released.cap_day],
          ['month', released.cap_month],
        ] as const) {
          if (released.cap_subject === null || start === null) continue;
          // No cap check: the call was delivered, and the draw says what it drew.
          await sequelize.query(
            `INSERT INTO svc_limit_credit_draws (subject, period, period_start, credits) VALUES (:subject, :period, :start, :credits)
           ON CONFLICT (subject, period, period_start) DO UPDATE SET credits = svc_limit_credit_draws.credits + EXCLUDED.credits`,
            { replacements: { subject: released.cap_subject, period, start, credits: released.credits }, transaction },
          );
        }
        hold = released;
      }
      await sequelize.query(
        `INSERT INTO billing_receipts (id, principal_id, hold_id, credits, operation, model, request_id, idempotency_key, usage, credential_id)
       VALUES (:id, :principal, :hold, :credits, :operation, :model, :requestId, :key, :usage::jsonb, :credentialId)`,
        {
          replacements: {
            id: newId('rcpt'),
            principal: hold.principal_id,
            hold: holdId,
            credits: hold.credits,
            operation: facts.operation,
            model: facts.model,
            requestId: facts.requestId,
            key: hold.idempotency_key,
            usage: JSON.stringify(facts.usage),
            credentialId: hold.credential_id,
          },
          transaction,
        },
      );
      // The key's usage shows the credits in the same transaction as the receipt: they always agree.
      if (hold.credential_id !== null) {
        await addKeyUsage(
          sequelize,
          { credentialId: hold.credential_id, model: facts.model, requests: 0, promptTokens: 0, completionTokens: 0, totalTokens: 0, credits: hold.credits },
          transaction,
        );
      }
      return 'committed' as const;
    })
    .catch((error: unknown) => {
      if (error instanceof NotChargedSignal) return 'not_charged' as const;
      throw error;
    });
}

class NotChargedSignal extends Error {}

/** Gives a held credit back (the call failed, the client left, or the hold expired). */
export async function releaseHold(sequelize: Sequelize, holdId: string): Promise<boolean> {
  return sequelize.transaction(async (transaction) => {
    const [hold] = await sequelize.query<{ principal_id: string; credits: number; cap_subject: string | null; cap_day: Date | null; cap_month: Date | null }>(
      `UPDATE billing_holds SET status = 'released', finished_at = now() WHERE id = :id AND status = 'held'
       RETURNING principal_id, credits, cap_subject, cap_day, cap_month`,
      { replacements: { id: holdId }, type: QueryTypes.SELECT, transaction },
    );
    if (!hold) return false;
    // A released call gives its share of the caps back, in the period it was drawn from.
    for (const [period, start] of [
      ['day', hold.cap_day],
      ['month', hold.cap_month],
    ] as const) {
      if (hold.cap_subject === null || start === null) continue;
      await sequelize.query(
        `UPDATE svc_limit_credit_draws SET credits = credits - :credits WHERE subject = :subject AND period = :period AND period_start = :start AND credits >= :credits`,
        { replacements: { credits: hold.credits, subject: hold.cap_subject, period, start }, transaction },
      );
    }
    await move(sequelize, transaction, {
      principalId: hold.principal_id,
      kind: 'release',
      spendable: hold.credits,
      reserved: -hold.credits,
      reference: holdId,
    });
    return true;
  });
}

/** Whether the principal's call under this Idempotency-Key was committed: a retry of it replays its answer. */
export async function holdCommitted(sequelize: Sequelize, principalId: string, idempotencyKey: string): Promise<boolean> {
  const rows = await sequelize.query(`SELECT 1 FROM billing_holds WHERE principal_id = :principal AND idempotency_key = :key AND status = 'committed'`, {
    replacements: { principal: principalId, key: idempotencyKey },
    type: QueryTypes.SELECT,
  });
  return rows.length > 0;
}

/** Releases holds whose server died mid-call (any replica may run this); answers how many. */
export async function releaseExpiredHolds(sequelize: Sequelize): Promise<number> {
  const expired = await sequelize.query<{ id: string }>(
    `SELECT id FROM billing_holds WHERE status = 'held' AND expires_at < now() ORDER BY expires_at LIMIT 500`,
    { type: QueryTypes.SELECT },
  );
  let released = 0;
  for (const { id } of expired) if (await releaseHold(sequelize, id)) released++;
  return released;
}
