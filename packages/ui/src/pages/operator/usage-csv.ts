import type { UsageReport } from '@svc/schemas';

/**
 * One text cell of RFC 4180 CSV. A cell a spreadsheet would run as a formula (starting with `=`,
 * `+`, `-`, `@`, tab or CR) gets a leading `'`, as the server's billing CSV does (OWASP CSV
 * injection): a key's name or a model's id is the caller's text.
 */
export function csvCell(value: string | number): string {
  if (typeof value === 'number') return String(value);
  const safe = /^[=+\-@\t\r＝＋－＠]/.test(value) ? `'${value}` : value;
  return /[",\r\n']/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

const COLUMNS = ['group', 'day_or_model_or_key', 'name', 'owner', 'requests', 'prompt_tokens', 'completion_tokens', 'total_tokens', 'credits'] as const;

/** The report as one CSV: a row per day, per model and per key, each with its sums. */
export function usageCsv(report: UsageReport): string {
  type Sums = UsageReport['totals'];
  const line = (group: string, id: string, name: string, owner: string, sums: Sums) =>
    [group, id, name, owner, sums.requests, sums.prompt_tokens, sums.completion_tokens, sums.total_tokens, sums.credits].map(csvCell).join(',');
  return [
    COLUMNS.join(','),
    ...report.by_day.map((day) => line('day', day.day, '', '', day)),
    ...report.by_model.map((model) => line('model', model.model, '', '', model)),
    ...report.by_key.map((key) => line('key', key.credential_id, key.name, key.owner, key)),
  ].join('\r\n');
}
