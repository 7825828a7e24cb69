import { PassThrough } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { CreditUsageReceipt, StripeCreditUsagePage } from '@svc/schemas';
import type { Sequelize } from 'sequelize';
import { keysetPage, type KeysetList, listAnswer } from '../../db/keyset-page.ts';

interface ReceiptRow {
  id: string;
  created_at: Date;
  credits: number;
  operation: string;
  model: string;
  request_id: string;
  idempotency_key: string;
  usage: CreditUsageReceipt['usage'];
  credential_id: string | null;
}

const toReceipt = (row: ReceiptRow): CreditUsageReceipt => ({
  receipt_id: row.id,
  created_at: new Date(row.created_at).toISOString(),
  credits: row.credits,
  operation: row.operation,
  model: row.model,
  request_id: row.request_id,
  idempotency_key: row.idempotency_key,
  usage: row.usage,
  credential_id: row.credential_id,
});

/** An earlier usage cursor held the last receipt's sequence number as `{ s }` (a bigint, as text). */
const earlierCursor = (value: unknown) =>
  typeof value === 'object' && value !== null && typeof (value as { s?: unknown }).s === 'string' ? [(value as { s: string }).s] : undefined;

/** A principal's receipts, newest first, by their sequence number. */
const receiptsOf = (principalId: string): KeysetList => ({
  select: 'id, created_at, credits, operation, model, request_id, idempotency_key, usage, credential_id',
  from: 'billing_receipts',
  where: ['principal_id = :principal'],
  replacements: { principal: principalId },
  keys: [{ column: 'billing_receipts.seq', order: 'DESC', type: 'bigint' }],
  earlierCursor,
});

/** One page of receipts, newest first. */
export async function usagePage(sequelize: Sequelize, principalId: string, query: { limit: number; cursor?: string }): Promise<StripeCreditUsagePage> {
  const page = await keysetPage<ReceiptRow>(sequelize, receiptsOf(principalId), query);
  return { object: 'list', ...listAnswer(page, page.rows.map(toReceipt)) };
}

export const csvColumns = [
  'receipt_id',
  'created_at',
  'credits',
  'operation',
  'model',
  'request_id',
  'idempotency_key',
  'prompt_tokens',
  'completion_tokens',
  'total_tokens',
  'credential_id',
] as const;

const csvRecord = (receipt: CreditUsageReceipt) => [
  receipt.receipt_id,
  receipt.created_at,
  receipt.credits,
  receipt.operation,
  receipt.model,
  receipt.request_id,
  receipt.idempotency_key,
  receipt.usage.prompt_tokens,
  receipt.usage.completion_tokens ?? '',
  receipt.usage.total_tokens,
  receipt.credential_id ?? '',
];

/**
 * First characters that make a spreadsheet run a cell as a formula (OWASP CSV injection: `=`, `+`,
 * `-`, `@`, tab, CR, and the full-width forms Apple Numbers folds into them).
 */
const FORMULA_START = /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;

/**
 * The Idempotency-Key and the request id are the caller's text. csv-stringify's `escape_formulas`
 * prefixes such a text cell with `'` (numbers are left as numbers: no column is negative today, and
 * one that became so must still read as a number); OWASP also wants the cell quoted, which the
 * per-cell `quoted` option does.
 */
const csvOptions = {
  escape_formulas: true,
  cast: { string: (value: string) => (FORMULA_START.test(value) ? { value, quoted: true } : value) },
} as const;

/** Rows read per query while streaming a CSV export: memory stays flat however many receipts there are. */
const CSV_BATCH = 1000;

/**
 * Receipts as RFC 4180 CSV with a header row (csv-stringify): one page, or with `all` every
 * receipt after the cursor, read in keyset batches and written as the client takes them.
 */
export function usageCsv(
  sequelize: Sequelize,
  principalId: string,
  query: { limit: number; cursor?: string; all: boolean },
  signal: AbortSignal,
): { stream: PassThrough; firstPage: Promise<StripeCreditUsagePage> } {
  const out = new PassThrough();
  const csv = stringify({ header: true, columns: [...csvColumns], record_delimiter: 'windows', ...csvOptions });
  csv.pipe(out);
  const firstPage = usagePage(sequelize, principalId, query);
  void (async () => {
    // A refused first page (a bad cursor) is the handler's to answer; the stream, never sent, just ends.
    const page = await firstPage.catch(() => undefined);
    if (!page) {
      csv.end();
      return;
    }
    try {
      for (const receipt of page.data) if (!csv.write(csvRecord(receipt))) await new Promise((resolve) => csv.once('drain', resolve));
      let cursor = page.next_cursor;
      while (query.all && cursor !== null && !signal.aborted) {
        const batch = await keysetPage<ReceiptRow>(sequelize, receiptsOf(principalId), { limit: CSV_BATCH, cursor });
        for (const row of batch.rows) if (!csv.write(csvRecord(toReceipt(row)))) await new Promise((resolve) => csv.once('drain', resolve));
        cursor = batch.nextCursor;
      }
      csv.end();
    } catch (error) {
      out.destroy(error as Error);
    }
  })();
  return { stream: out, firstPage };
}
