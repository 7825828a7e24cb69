import type { KeyUsagePage, KeyUsageRow } from '@svc/schemas';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { decodeCursor, encodeCursor } from '../../http/opaque-cursor.ts';

/** What one finished inference call adds to its key's day and model. */
export interface KeyCall {
  credentialId: string;
  model: string;
  usage: { prompt_tokens: number; completion_tokens?: number; total_tokens: number };
}

const utcDay = (at: Date) => at.toISOString().slice(0, 10);

/** Adds one call (or only credits, from a committed hold) to the key's row of the UTC day and model. */
export async function addKeyUsage(
  sequelize: Sequelize,
  entry: { credentialId: string; model: string; requests: number; promptTokens: number; completionTokens: number; totalTokens: number; credits: number },
  transaction?: Transaction,
): Promise<void> {
  await sequelize.query(
    `INSERT INTO svc_developer_key_usage (credential_id, day, model, requests, prompt_tokens, completion_tokens, total_tokens, credits)
     VALUES (:credentialId, :day, :model, :requests, :promptTokens, :completionTokens, :totalTokens, :credits)
     ON CONFLICT (credential_id, day, model) DO UPDATE SET
       requests = svc_developer_key_usage.requests + EXCLUDED.requests,
       prompt_tokens = svc_developer_key_usage.prompt_tokens + EXCLUDED.prompt_tokens,
       completion_tokens = svc_developer_key_usage.completion_tokens + EXCLUDED.completion_tokens,
       total_tokens = svc_developer_key_usage.total_tokens + EXCLUDED.total_tokens,
       credits = svc_developer_key_usage.credits + EXCLUDED.credits`,
    { replacements: { ...entry, day: utcDay(new Date()) }, transaction },
  );
}

/** An inference call of a developer key: one request and its tokens. */
export const recordKeyCall = (sequelize: Sequelize, call: KeyCall) =>
  addKeyUsage(sequelize, {
    credentialId: call.credentialId,
    model: call.model,
    requests: 1,
    promptTokens: call.usage.prompt_tokens,
    completionTokens: call.usage.completion_tokens ?? 0,
    totalTokens: call.usage.total_tokens,
    credits: 0,
  });

/** A usage cursor: the (day, model) of the last row of a page. */
const isDayModelCursor = (value: unknown): value is [string, string] =>
  Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value[0]) && typeof value[1] === 'string';

/** One page of a key's usage, newest day first and by model within a day. */
export async function keyUsagePage(sequelize: Sequelize, credentialId: string, limit: number, cursor: string | undefined): Promise<KeyUsagePage> {
  const after = decodeCursor(cursor, isDayModelCursor);
  const rows = await sequelize.query<{
    day: string;
    model: string;
    requests: string;
    prompt_tokens: string;
    completion_tokens: string;
    total_tokens: string;
    credits: string;
  }>(
    `SELECT to_char(day, 'YYYY-MM-DD') AS day, model, requests, prompt_tokens, completion_tokens, total_tokens, credits FROM svc_developer_key_usage
     WHERE credential_id = :credentialId ${after ? 'AND (day < :day::date OR (day = :day::date AND model > :model))' : ''}
     ORDER BY day DESC, model ASC LIMIT :take`,
    { replacements: { credentialId, day: after?.[0] ?? null, model: after?.[1] ?? null, take: limit + 1 }, type: QueryTypes.SELECT },
  );
  const page = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  const last = page.at(-1);
  const data: KeyUsageRow[] = page.map((row) => ({
    day: row.day,
    model: row.model,
    requests: Number(row.requests),
    prompt_tokens: Number(row.prompt_tokens),
    completion_tokens: Number(row.completion_tokens),
    total_tokens: Number(row.total_tokens),
    credits: Number(row.credits),
  }));
  return { credential_id: credentialId, data, has_more: hasMore, next_cursor: hasMore && last ? encodeCursor([last.day, last.model]) : null };
}

/**
 * Usage events of calls made with a developer key, written to the key's day and model. The write
 * is not awaited by the call (its answer is already out); a failed write is logged.
 */
export function keyUsageListener(sequelize: Sequelize, onError: (error: unknown) => void) {
  return (event: { developerKeyId?: string; model: string; usage: KeyCall['usage'] }): void => {
    if (event.developerKeyId === undefined) return;
    recordKeyCall(sequelize, { credentialId: event.developerKeyId, model: event.model, usage: event.usage }).catch(onError);
  };
}
