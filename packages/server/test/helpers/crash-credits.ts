import { QueryTypes, type Sequelize } from 'sequelize';

/** A credit-funded chat call with raw fetch, so a test controls the Idempotency-Key and the exact body bytes. */
export function creditChat(baseUrl: string, token: string, body: string, idempotencyKey: string): Promise<Response> {
  return fetch(`${baseUrl}/v1/credits/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
    body,
  });
}

export interface CreditBooks {
  account: { spendable: number; reserved: number };
  /** The sums of the ledger's deltas: they must equal the account. */
  ledgerSums: { spendable: number; reserved: number };
  /** Credits spent: the sum over receipts. */
  spent: number;
  /** Every receipt's Idempotency-Key, one per receipt. */
  receiptKeys: string[];
  /** Receipts whose hold has no `commit` ledger row (must be none). */
  receiptsWithoutCommit: string[];
  /** `commit` ledger rows with no receipt for their hold (must be none). */
  commitsWithoutReceipt: string[];
}

/** Reads one principal's credit books straight from the database, for checks after a crash. */
export async function checkCreditBooks(sequelize: Sequelize, principalId: string): Promise<CreditBooks> {
  const select = <T extends object>(sql: string) => sequelize.query<T>(sql, { replacements: { principal: principalId }, type: QueryTypes.SELECT });
  const [account] = await select<{ spendable: string; reserved: string }>('SELECT spendable, reserved FROM billing_accounts WHERE principal_id = :principal');
  const [sums] = await select<{ spendable: string | null; reserved: string | null }>(
    'SELECT sum(spendable_delta) AS spendable, sum(reserved_delta) AS reserved FROM billing_ledger WHERE principal_id = :principal',
  );
  const receipts = await select<{ idempotency_key: string; credits: number }>(
    'SELECT idempotency_key, credits FROM billing_receipts WHERE principal_id = :principal',
  );
  const orphanReceipts = await select<{ id: string }>(
    `SELECT r.id FROM billing_receipts r WHERE r.principal_id = :principal
       AND NOT EXISTS (SELECT 1 FROM billing_ledger l WHERE l.kind = 'commit' AND l.reference = r.hold_id AND l.principal_id = r.principal_id)`,
  );
  const orphanCommits = await select<{ reference: string }>(
    `SELECT l.reference FROM billing_ledger l WHERE l.principal_id = :principal AND l.kind = 'commit'
       AND NOT EXISTS (SELECT 1 FROM billing_receipts r WHERE r.hold_id = l.reference)`,
  );
  return {
    account: { spendable: Number(account?.spendable ?? 0), reserved: Number(account?.reserved ?? 0) },
    ledgerSums: { spendable: Number(sums?.spendable ?? 0), reserved: Number(sums?.reserved ?? 0) },
    spent: receipts.reduce((total, receipt) => total + Number(receipt.credits), 0),
    receiptKeys: receipts.map((receipt) => receipt.idempotency_key),
    receiptsWithoutCommit: orphanReceipts.map((row) => row.id),
    commitsWithoutReceipt: orphanCommits.map((row) => row.reference),
  };
}
