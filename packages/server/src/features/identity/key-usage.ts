import type { KeyUsagePage, KeyUsageRow } from '@svc/schemas';
import type { Sequelize, Transaction } from 'sequelize';
import { keysetPage, listAnswer } from '../../db/keyset-page.ts';

/** What one finished inference call adds to its key's day and model. */
export interface KeyCall {
  credentialId: string;
  model: string;
  usage: { prompt_tokens: number; completion_tokens?: number; total_tokens: number };
}

const utcDay = (at: Date) => at.toISOString().slice(0, 10);

/** Adds credits from a committed hold (in its transaction) to the key's row of the UTC day and model; calls are counted in batches (key-usage-batch.ts). */
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

/** One page of a key's usage, newest day first and by model within a day. */
export async function keyUsagePage(sequelize: Sequelize, credentialId: string, limit: number, cursor: string | undefined): Promise<KeyUsagePage> {
  const page = await keysetPage<{
    day: string;
    model: string;
    requests: string;
    prompt_tokens: string;
    completion_tokens: string;
    total_tokens: string;
    credits: string;
  }>(
    sequelize,
    {
      select: "to_char(day, 'YYYY-MM-DD') AS day, model, requests, prompt_tokens, completion_tokens, total_tokens, credits",
      from: 'svc_developer_key_usage',
      where: ['credential_id = :credentialId'],
      replacements: { credentialId },
      keys: [
        { column: 'svc_developer_key_usage.day', order: 'DESC', type: 'date' },
        { column: 'model', order: 'ASC', type: 'text' },
      ],
    },
    { limit, cursor },
  );
  const data: KeyUsageRow[] = page.rows.map((row) => ({
    day: row.day,
    model: row.model,
    requests: Number(row.requests),
    prompt_tokens: Number(row.prompt_tokens),
    completion_tokens: Number(row.completion_tokens),
    total_tokens: Number(row.total_tokens),
    credits: Number(row.credits),
  }));
  return { credential_id: credentialId, ...listAnswer(page, data) };
}
