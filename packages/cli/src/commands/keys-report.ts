import type { Command } from 'commander';
import { developerKeysContract, type UsageReport } from '@svc/schemas';
import { withContext } from '../context.ts';
import { requestFrom } from '../contract-flags.ts';
import { table } from '../output.ts';

type Totals = UsageReport['totals'];
const HEADER = ['REQUESTS', 'TOKENS', 'CREDITS'];
const figures = (totals: Totals) => [String(totals.requests), String(totals.total_tokens), String(totals.credits)];

/** The report as people read it: the range and its totals, then a table per day, per model and per key, as the console's Usage page lays them out. */
export function renderUsageReport(report: UsageReport): string {
  const sections = [
    `${report.from} to ${report.to} (UTC days, both included): ${report.totals.requests} requests, ${report.totals.total_tokens} tokens, ${report.totals.credits} credits`,
  ];
  if (report.by_day.length === 0) return `${sections[0]}\nNo key was used in this range.`;
  sections.push(table([['DAY', ...HEADER], ...report.by_day.map((day) => [day.day, ...figures(day)])]));
  const models = table([['MODEL', ...HEADER], ...report.by_model.map((model) => [model.model, ...figures(model)])]);
  sections.push(report.models_truncated ? `${models}\n(the busiest ${report.by_model.length} models; more were used)` : models);
  const keys = table([['KEY', 'NAME', 'OWNER', ...HEADER], ...report.by_key.map((key) => [key.credential_id, key.name, key.owner, ...figures(key)])]);
  sections.push(report.keys_truncated ? `${keys}\n(the busiest ${report.by_key.length} keys; more were used)` : keys);
  return sections.join('\n\n');
}

/** `svc keys report`: the operator's usage report (GET /v1/developer/usage), every key's use over a range of UTC days. */
export function registerKeysReportCommand(keys: Command): void {
  keys
    .command('report')
    .description("Every key's use over a range of UTC days, per day, per model and per key, busiest first (the operator token only)")
    .option('--from <day>', 'first UTC day (YYYY-MM-DD); default: 29 days before --to')
    .option('--to <day>', 'last UTC day, included (YYYY-MM-DD); default: today')
    .action(
      withContext(async (cli, flags: { from?: string; to?: string }) => {
        // Checked against the contract before the call: a bad day or a too-long range exits 2 naming the flag.
        const query = requestFrom(developerKeysContract.usageReport, 'query', { from: flags.from, to: flags.to }, { from: '--from', to: '--to' });
        cli.output.result(await cli.client().developerKeys.usageReport({ query }), renderUsageReport);
      }),
    );
}
