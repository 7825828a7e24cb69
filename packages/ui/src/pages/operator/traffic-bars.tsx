import { TableRegion } from '../../components/table-region.tsx';
import type { ModelTraffic, RouteTraffic } from './metrics-text.ts';

/**
 * Requests per route as bars (`<meter>`, drawn by the browser: no script, no inline style for the
 * CSP to refuse), each with its errors and mean latency in words beside it.
 */
export function RouteBars({ routes }: { routes: RouteTraffic[] }) {
  if (routes.length === 0) return <p>No API calls since this process started.</p>;
  const most = Math.max(...routes.map((row) => row.ok + row.clientErrors + row.serverErrors));
  return (
    <TableRegion label="Requests per route">
      <table data-testid="route-traffic" class="bars">
        <thead>
          <tr>
            <th scope="col">Route</th>
            <th scope="col">Requests</th>
            <th scope="col">Refused (4xx)</th>
            <th scope="col">Failed (5xx)</th>
            <th scope="col">Mean time</th>
          </tr>
        </thead>
        <tbody>
          {routes.map((row) => {
            const total = row.ok + row.clientErrors + row.serverErrors;
            return (
              <tr key={row.label}>
                <th scope="row">
                  <code>{row.label}</code>
                </th>
                <td>
                  <meter min={0} max={most} value={total} aria-label={`${row.label}: ${total} requests`} /> {total}
                </td>
                <td>{row.clientErrors}</td>
                <td class={row.serverErrors > 0 ? 'warn' : undefined}>{row.serverErrors}</td>
                <td>{row.meanMs === undefined ? '–' : `${row.meanMs < 10 ? row.meanMs.toFixed(1) : Math.round(row.meanMs)} ms`}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </TableRegion>
  );
}

/** Inference calls and tokens per model since this process started (the `svc_inference_*` counters). */
export function ModelBars({ models }: { models: ModelTraffic[] }) {
  if (models.length === 0) return <p>No inference calls since this process started.</p>;
  const most = Math.max(...models.map((row) => row.ok + row.failed));
  return (
    <TableRegion label="Inference calls per model">
      <table data-testid="model-traffic" class="bars">
        <thead>
          <tr>
            <th scope="col">Model</th>
            <th scope="col">Calls</th>
            <th scope="col">Failed</th>
            <th scope="col">Tokens</th>
          </tr>
        </thead>
        <tbody>
          {models.map((row) => (
            <tr key={row.model}>
              <th scope="row">
                <code>{row.model}</code>
              </th>
              <td>
                <meter min={0} max={most} value={row.ok + row.failed} aria-label={`${row.model}: ${row.ok + row.failed} calls`} /> {row.ok + row.failed}
              </td>
              <td class={row.failed > 0 ? 'warn' : undefined}>{row.failed}</td>
              <td>{row.tokens}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableRegion>
  );
}
