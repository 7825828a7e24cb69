import { randomBytes } from 'node:crypto';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';

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
  | { kind: 'exhausted'; spendable: number };

const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString('base64url')}`;

/**
 * Reserves credits for one call under its Idempotency-Key, atomically. A key already committed
 * answers its stored result; one still held is in progress; one whose earlier try was released
 * (failed, disconnected) is held again, so a retry after a failure runs and is charged once. With
 * too little spendable credit nothing is written.
 */
export async function holdCredits(
  sequelize: Sequelize,
  call: { principalId: string; idempotencyKey: string; fingerprint: string; credits: number; ttlSeconds: number },
): Promise<HoldDecision> {
  const attempt = () =>
    sequelize.transaction(async (transaction): Promise<HoldDecision> => {
      const fresh = newId('hold');
      const inserted = await sequelize.query<{ id: string }>(
        `INSERT INTO billing_holds (id, principal_id, idempotency_key, fingerprint, status, credits, expires_at)
         VALUES (:id, :principal, :key, :fingerprint, 'held', :credits, now() + make_interval(secs => :ttl))
         ON CONFLICT (principal_id, idempotency_key) DO NOTHING RETURNING id`,
        {
          replacements: {
            id: fresh,
            principal: call.principalId,
            key: call.idempotencyKey,
            fingerprint: call.fingerprint,
            credits: call.credits,
            ttl: call.ttlSeconds,
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
        await sequelize.query(`UPDATE billing_holds SET status = 'held', finished_at = NULL, expires_at = now() + make_interval(secs => :ttl) WHERE id = :id`, {
          replacements: { id: existing.id, ttl: call.ttlSeconds },
          transaction,
        });
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
      return { kind: 'held', holdId };
    });
  try {
    return await attempt();
  } catch (error) {
    if (error instanceof ExhaustedSignal) return { kind: 'exhausted', spendable: error.spendable };
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

/** Spends a held credit: the hold becomes committed with the answer to replay, and an immutable receipt is written. */
export async function commitHold(sequelize: Sequelize, holdId: string, result: unknown, facts: ReceiptFacts): Promise<'committed' | 'not_held'> {
  return sequelize.transaction(async (transaction) => {
    const [hold] = await sequelize.query<{ principal_id: string; idempotency_key: string; credits: number }>(
      `UPDATE billing_holds SET status = 'committed', result = :result, finished_at = now() WHERE id = :id AND status = 'held' RETURNING principal_id, idempotency_key, credits`,
      { replacements: { id: holdId, result: JSON.stringify(result) }, type: QueryTypes.SELECT, transaction },
    );
    if (!hold) return 'not_held';
    await move(sequelize, transaction, { principalId: hold.principal_id, kind: 'commit', spendable: 0, reserved: -hold.credits, reference: holdId });
    await sequelize.query(
      `INSERT INTO billing_receipts (id, principal_id, hold_id, credits, operation, model, request_id, idempotency_key, usage)
       VALUES (:id, :principal, :hold, :credits, :operation, :model, :requestId, :key, :usage::jsonb)`,
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
        },
        transaction,
      },
    );
    return 'committed';
  });
}

/** Gives a held credit back (the call failed, the client left, or the hold expired). */
export async function releaseHold(sequelize: Sequelize, holdId: string): Promise<boolean> {
  return sequelize.transaction(async (transaction) => {
    const [hold] = await sequelize.query<{ principal_id: string; credits: number }>(
      `UPDATE billing_holds SET status = 'released', finished_at = now() WHERE id = :id AND status = 'held' RETURNING principal_id, credits`,
      { replacements: { id: holdId }, type: QueryTypes.SELECT, transaction },
    );
    if (!hold) return false;
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
