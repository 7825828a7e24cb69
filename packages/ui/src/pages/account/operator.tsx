import { useLoad, useTitle } from '../../hooks.ts';
import { ErrorNote } from '../../components/error-note.tsx';
import { BASE } from '../../links.ts';
import { signedInClient } from '../../signed-in.ts';
import { RequireSession } from './require-session.tsx';

/** Requests per route and status class, summed from the Prometheus text of /v1/metrics (one counter family, one line each). */
export function requestsByRoute(metrics: string): Array<{ route: string; ok: number; clientErrors: number; serverErrors: number }> {
  const rows = new Map<string, { route: string; ok: number; clientErrors: number; serverErrors: number }>();
  for (const line of metrics.split('\n')) {
    const match = /^svc_http_requests_total\{route="([^"]*)",method="([A-Z]+)",status="(\d{3})"\} (\d+(?:\.\d+)?)$/.exec(line);
    if (!match) continue;
    const route = `${match[2]} ${match[1]}`;
    const row = rows.get(route) ?? { route, ok: 0, clientErrors: 0, serverErrors: 0 };
    const count = Number(match[4]);
    if (match[3]!.startsWith('5')) row.serverErrors += count;
    else if (match[3]!.startsWith('4')) row.clientErrors += count;
    else row.ok += count;
    rows.set(route, row);
  }
  return [...rows.values()].sort((a, b) => b.ok + b.clientErrors + b.serverErrors - (a.ok + a.clientErrors + a.serverErrors));
}

/** The operator's overview: health, the busiest routes and their errors, and the way to the moderation queue. */
export function OperatorPage() {
  useTitle('Operator');
  const [loaded] = useLoad(async (signal) => {
    const svc = await signedInClient();
    const [health, metrics] = await Promise.all([svc.system.healthz(undefined, { signal }), svc.system.metrics(undefined, { signal })]);
    return { health, routes: requestsByRoute(String(metrics)).slice(0, 25) };
  }, []);
  return (
    <RequireSession operator>
      <h1>Operator</h1>
      <p>
        <a href={`${BASE}requests`}>Moderation queue</a>
      </p>
      {loaded.state === 'loading' && <p>Loading…</p>}
      {loaded.state === 'failed' && <ErrorNote error={loaded.error} />}
      {loaded.state === 'done' && (
        <>
          <p>
            svc {loaded.value.health.version}: {loaded.value.health.status}, up {Math.round(loaded.value.health.uptime_seconds)} s, database{' '}
            {loaded.value.health.database.kind} {loaded.value.health.database.status} ({loaded.value.health.database.latency_ms.toFixed(1)} ms)
          </p>
          <h2>Busiest routes</h2>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Route</th>
                  <th scope="col">2xx/3xx</th>
                  <th scope="col">4xx</th>
                  <th scope="col">5xx</th>
                </tr>
              </thead>
              <tbody>
                {loaded.value.routes.map((row) => (
                  <tr key={row.route}>
                    <td>
                      <code>{row.route}</code>
                    </td>
                    <td>{row.ok}</td>
                    <td>{row.clientErrors}</td>
                    <td>{row.serverErrors}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </RequireSession>
  );
}
