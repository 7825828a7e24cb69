import { ErrorNote } from '../../components/error-note.tsx';
import { useLoad, useTitle } from '../../hooks.ts';
import { BASE } from '../../links.ts';
import { signedInClient } from '../../signed-in.ts';
import { CachePanel } from '../operator/cache-panel.tsx';
import { DeploymentsTable } from '../operator/deployments-table.tsx';
import { trafficByModel, trafficByRoute } from '../operator/metrics-text.ts';
import { ModelBars, RouteBars } from '../operator/traffic-bars.tsx';
import { RequireSession } from './require-session.tsx';

/**
 * The operator's overview, from the endpoints the operator already has: health (`/healthz`), each
 * upstream deployment's state (`/v1/upstreams/health`), the response cache (`/v1/cache`, with its
 * purge) and the traffic per route and per model (`/v1/metrics`, read into bars).
 */
export function OperatorPage() {
  useTitle('Operator');
  const [loaded] = useLoad(async (signal) => {
    const svc = await signedInClient();
    const [health, deployments, metrics] = await Promise.all([
      svc.system.healthz(undefined, { signal }),
      svc.upstreams.health(undefined, { signal }),
      svc.system.metrics(undefined, { signal }),
    ]);
    const text = String(metrics);
    return { health, deployments: deployments.data, routes: trafficByRoute(text).slice(0, 25), models: trafficByModel(text) };
  }, []);
  return (
    <RequireSession operator>
      <h1>Operator</h1>
      <p>
        <a href={`${BASE}operator/keys`}>All keys</a> · <a href={`${BASE}operator/usage`}>Usage</a> · <a href={`${BASE}requests`}>Moderation queue</a> ·{' '}
        <a href={`${BASE}jobs`}>Jobs</a>
      </p>
      {loaded.state === 'loading' && <p>Loading…</p>}
      {loaded.state === 'failed' && <ErrorNote error={loaded.error} />}
      {loaded.state === 'done' && (
        <>
          <p data-testid="server-health">
            svc {loaded.value.health.version}: {loaded.value.health.status}, up {Math.round(loaded.value.health.uptime_seconds)} s, database{' '}
            {loaded.value.health.database.kind} {loaded.value.health.database.status} ({loaded.value.health.database.latency_ms.toFixed(1)} ms)
          </p>
          <h2>Models and deployments</h2>
          <DeploymentsTable deployments={loaded.value.deployments} />
          <h2>Response cache</h2>
          <CachePanel />
          <h2>Busiest routes</h2>
          <p class="meta">Since this process started; the console's own pages and files are left out.</p>
          <RouteBars routes={loaded.value.routes} />
          <h2>Inference by model</h2>
          <ModelBars models={loaded.value.models} />
        </>
      )}
    </RequireSession>
  );
}
