import { PassThrough } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { CreditUsageReceipt, StripeCreditUsagePage } from '@svc/schemas';
import { QueryTypes, type Sequelize } from 'sequelize';
import { decodeCursor, encodeCursor } from '../../http/opaque-cursor.ts';

interface ReceiptRow {
  seq: string;
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

/** A usage cursor holds the last receipt's sequence number (a bigint, as text). */
const isSequenceCursor = (value: unknown): value is { s: string } =>
  typeof value === 'object' && value !== null && typeof (value as { s?: unknown }).s === 'string' && /^\d{1,19}$/.test((value as { s: string }).s);
const sequenceAfter = (cursor: string | undefined) => decodeCursor(cursor, isSequenceCursor)?.s;

async function fetchRows(sequelize: Sequelize, principalId: string, before: string | undefined, limit: number): Promise<ReceiptRow[]> {
  return sequelize.query<ReceiptRow>(
    // Ordered by the bigint column: the text alias would sort "86" after "109".
    `SELECT seq::text AS seq, id, created_at, credits, operation, model, request_id, idempotency_key, usage, credential_id FROM billing_receipts
     WHERE principal_id = :principal ${before !== undefined ? 'AND seq < :before' : ''} ORDER BY billing_receipts.seq DESC LIMIT :limit`,
    { replacements: { principal: principalId, before: before ?? null, limit }, type: QueryTypes.SELECT },
  );
}

/** One page of receipts, newest first. */
export async function usagePage(sequelize: Sequelize, principalId: string, query: { limit: number; cursor?: string }): Promise<StripeCreditUsagePage> {
  const rows = await fetchRows(sequelize, principalId, sequenceAfter(query.cursor), query.limit + 1);
  const page = rows.slice(0, query.limit);
  const hasMore = rows.length > query.limit;
  return { object: 'list', data: page.map(toReceipt), has_more: hasMore, next_cursor: hasMore ? encodeCursor({ s: page.at(-1)!.seq }) : null };
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
      let cursor = page.next_cursor ? sequenceAfter(page.next_cursor) : undefined;
      while (query.all && cursor !== undefined && !signal.aborted) {
        const rows = await fetchRows(sequelize, principalId, cursor, CSV_BATCH);
        for (const row of rows) if (!csv.write(csvRecord(toReceipt(row)))) await new Promise((resolve) => csv.once('drain', resolve));
        cursor = rows.length === CSV_BATCH ? rows.at(-1)!.seq : undefined;
      }
      csv.end();
    } catch (error) {
      out.destroy(error as Error);
    }
  })();
  return { stream: out, firstPage };
}
