import { QueryTypes, type Sequelize } from 'sequelize';
import { MAX_USAGE_REPORT_DAYS, MAX_USAGE_REPORT_ROWS, type UsageReport } from '@svc/schemas';
import { ServiceError } from '../../service-error.ts';

const DAY_MS = 86_400_000;
const SUMS = `sum(requests)::text AS requests, sum(prompt_tokens)::text AS prompt_tokens, sum(completion_tokens)::text AS completion_tokens,
  sum(total_tokens)::text AS total_tokens, sum(credits)::text AS credits`;

interface SumRow {
  requests: string | null;
  prompt_tokens: string | null;
  completion_tokens: string | null;
  total_tokens: string | null;
  credits: string | null;
}

const totals = (row: SumRow) => ({
  requests: Number(row.requests ?? 0),
  prompt_tokens: Number(row.prompt_tokens ?? 0),
  completion_tokens: Number(row.completion_tokens ?? 0),
  total_tokens: Number(row.total_tokens ?? 0),
  credits: Number(row.credits ?? 0),
});

/** The range a report covers: `to` defaults to today (UTC), `from` to 29 days before it; at most MAX_USAGE_REPORT_DAYS days. */
export function reportRange(query: { from?: string; to?: string }, now = Date.now()): { from: string; to: string } {
  const to = query.to ?? new Date(now).toISOString().slice(0, 10);
  const from = query.from ?? new Date(Date.parse(`${to}T00:00:00Z`) - 29 * DAY_MS).toISOString().slice(0, 10);
  const days = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS + 1;
  if (days < 1) throw new ServiceError('validation_failed', `from (${from}) is after to (${to}).`);
  if (days > MAX_USAGE_REPORT_DAYS)
    throw new ServiceError('validation_failed', `The range ${from}..${to} is ${days} days; a report covers at most ${MAX_USAGE_REPORT_DAYS}.`);
  return { from, to };
}

/**
 * Every key's use over a range of UTC days, as sums of svc_developer_key_usage (one row per key,
 * day and model): per day, per model and per key, each read through the index by day. The work is
 * bounded by the range (at most MAX_USAGE_REPORT_DAYS days) and the lists by MAX_USAGE_REPORT_ROWS.
 */
export async function usageReport(sequelize: Sequelize, range: { from: string; to: string }): Promise<UsageReport> {
  const replacements = { ...range, take: MAX_USAGE_REPORT_ROWS + 1 };
  const inRange = 'WHERE day BETWEEN :from::date AND :to::date';
  const [all, days, models, keys] = await Promise.all([
    sequelize.query<SumRow>(`SELECT ${SUMS} FROM svc_developer_key_usage ${inRange}`, { replacements, type: QueryTypes.SELECT }),
    sequelize.query<SumRow & { day: string }>(
      `SELECT to_char(day, 'YYYY-MM-DD') AS day, ${SUMS} FROM svc_developer_key_usage ${inRange} GROUP BY day ORDER BY day`,
      { replacements, type: QueryTypes.SELECT },
    ),
    sequelize.query<SumRow & { model: string }>(
      `SELECT model, ${SUMS} FROM svc_developer_key_usage ${inRange} GROUP BY model
       ORDER BY sum(credits) DESC, sum(requests) DESC, model LIMIT :take`,
      { replacements, type: QueryTypes.SELECT },
    ),
    sequelize.query<SumRow & { credential_id: string; name: string; owner: string }>(
      `SELECT used.*, k.name, k.owner FROM (
         SELECT credential_id, ${SUMS}, sum(credits) AS spent, sum(requests) AS calls FROM svc_developer_key_usage ${inRange}
         GROUP BY credential_id ORDER BY sum(credits) DESC, sum(requests) DESC, credential_id LIMIT :take
       ) used JOIN svc_developer_keys k ON k.id = used.credential_id
       ORDER BY used.spent DESC, used.calls DESC, used.credential_id`,
      { replacements, type: QueryTypes.SELECT },
    ),
  ]);
  return {
    ...range,
    totals: totals(all[0] ?? ({} as SumRow)),
    by_day: days.map((row) => ({ day: row.day, ...totals(row) })),
    by_model: models.slice(0, MAX_USAGE_REPORT_ROWS).map((row) => ({ model: row.model, ...totals(row) })),
    models_truncated: models.length > MAX_USAGE_REPORT_ROWS,
    by_key: keys.slice(0, MAX_USAGE_REPORT_ROWS).map((row) => ({ credential_id: row.credential_id, name: row.name, owner: row.owner, ...totals(row) })),
    keys_truncated: keys.length > MAX_USAGE_REPORT_ROWS,
  };
}

/** The operator's usage reports; this replica's pending usage counters are written before each is read. */
export class KeyUsageReports {
  readonly #sequelize: Sequelize;
  readonly #flushUsage: () => Promise<void>;

  constructor(sequelize: Sequelize, flushUsage: () => Promise<void>) {
    this.#sequelize = sequelize;
    this.#flushUsage = flushUsage;
  }

  async report(query: { from?: string; to?: string }): Promise<UsageReport> {
    const range = reportRange(query);
    await this.#flushUsage();
    return usageReport(this.#sequelize, range);
  }
}
