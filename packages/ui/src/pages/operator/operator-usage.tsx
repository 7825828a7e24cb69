import type { UsageReport } from '@svc/schemas';
import { MAX_USAGE_REPORT_DAYS } from '@svc/schemas';
import { useState } from 'preact/hooks';
import { ErrorNote } from '../../components/error-note.tsx';
import { useLoad, useTitle } from '../../hooks.ts';
import { BASE } from '../../links.ts';
import { signedInClient } from '../../signed-in.ts';
import { CallsPerDayChart } from '../account/usage-chart.tsx';
import { RequireSession } from '../account/require-session.tsx';
import { usageCsv } from './usage-csv.ts';

const DAY_MS = 86_400_000;
const dayText = (at: number) => new Date(at).toISOString().slice(0, 10);

/** Offers the report as a CSV file, made in the page (a blob, nothing sent anywhere). */
function download(report: UsageReport) {
  const url = URL.createObjectURL(new Blob([usageCsv(report)], { type: 'text/csv;charset=utf-8' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = `svc-usage-${report.from}-${report.to}.csv`;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function SumsTable({
  label,
  testId,
  rows,
}: {
  label: string;
  testId: string;
  rows: Array<{ id: string; name?: string; owner?: string } & UsageReport['totals']>;
}) {
  const keys = rows.some((row) => row.owner !== undefined);
  return (
    <div class="table-wrap">
      <table data-testid={testId}>
        <caption class="meta">{label}</caption>
        <thead>
          <tr>
            <th scope="col">{keys ? 'Key' : 'Model'}</th>
            {keys && <th scope="col">Owner</th>}
            <th scope="col">Calls</th>
            <th scope="col">Tokens</th>
            <th scope="col">Credits</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.id}>
              <th scope="row">{row.name ?? row.id}</th>
              {keys && (
                <td>
                  <code>{row.owner}</code>
                </td>
              )}
              <td>{row.requests}</td>
              <td>{row.total_tokens}</td>
              <td>{row.credits}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * The operator's usage over a range of UTC days (`GET /v1/developer/usage`): calls per day as a
 * chart, and the sums by model and by key, busiest first; the whole report as CSV.
 */
export function OperatorUsagePage() {
  useTitle('Usage');
  const today = dayText(Date.now());
  const [range, setRange] = useState({ from: dayText(Date.now() - 29 * DAY_MS), to: today });
  const [loaded] = useLoad(async (signal) => (await signedInClient()).developerKeys.usageReport({ query: range }, { signal }), [range.from, range.to]);
  const submit = (event: Event) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget as HTMLFormElement);
    setRange({ from: String(data.get('from')), to: String(data.get('to')) });
  };
  return (
    <RequireSession operator>
      <h1>Usage</h1>
      <p class="meta">
        Every developer key's calls, tokens and credits by UTC day. <a href={`${BASE}operator`}>Operator overview</a> ·{' '}
        <a href={`${BASE}operator/keys`}>All keys</a>
      </p>
      <form class="row panel" onSubmit={submit} aria-label="Date range">
        <label>
          From
          <input type="date" name="from" defaultValue={range.from} max={today} required />
        </label>
        <label>
          To
          <input type="date" name="to" defaultValue={range.to} max={today} required />
        </label>
        <button type="submit">Show</button>
        <span class="meta">At most {MAX_USAGE_REPORT_DAYS} days.</span>
      </form>
      {loaded.state === 'loading' && <p>Loading usage…</p>}
      {loaded.state === 'failed' && <ErrorNote error={loaded.error} />}
      {loaded.state === 'done' && (
        <>
          <p data-testid="usage-totals">
            {loaded.value.from} to {loaded.value.to}: {loaded.value.totals.requests} calls, {loaded.value.totals.total_tokens} tokens,{' '}
            {loaded.value.totals.credits} credits.{' '}
            <button type="button" onClick={() => download(loaded.value)}>
              Export as CSV
            </button>
          </p>
          {loaded.value.by_day.length === 0 ? (
            <p data-testid="no-usage">No key made a call in this range: widen it, or give an agent a key and let it call a model.</p>
          ) : (
            <>
              <h2>Calls per day</h2>
              <CallsPerDayChart days={loaded.value.by_day.map((day) => ({ day: day.day, calls: day.requests }))} />
              <h2>By model</h2>
              <SumsTable label="Models, busiest first" testId="usage-by-model" rows={loaded.value.by_model.map((model) => ({ id: model.model, ...model }))} />
              {loaded.value.models_truncated && <p class="meta">More models were used; the busiest 100 are shown.</p>}
              <h2>By key</h2>
              <SumsTable label="Keys, busiest first" testId="usage-by-key" rows={loaded.value.by_key.map((key) => ({ id: key.credential_id, ...key }))} />
              {loaded.value.keys_truncated && <p class="meta">More keys were used; the busiest 100 are shown.</p>}
            </>
          )}
        </>
      )}
    </RequireSession>
  );
}
