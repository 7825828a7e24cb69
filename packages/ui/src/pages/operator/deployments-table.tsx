import { TableRegion } from '../../components/table-region.tsx';
import type { DeploymentHealthInfo } from '@svc/schemas';

const STATE_WORDS: Record<DeploymentHealthInfo['state'], string> = {
  healthy: 'healthy',
  cooling_down: 'cooling down',
  probe_due: 'probe due',
  probing: 'probing',
};

const percent = (rate: number) => `${(rate * 100).toFixed(rate > 0 && rate < 0.1 ? 1 : 0)}%`;
const ms = (value: number | null) => (value === null ? '–' : `${Math.round(value)} ms`);

/** Each upstream deployment as this process sees it (`GET /v1/upstreams/health`): state, cooldown, error rate and latency of its latest calls. */
export function DeploymentsTable({ deployments }: { deployments: DeploymentHealthInfo[] }) {
  if (deployments.length === 0)
    return (
      <p data-testid="no-deployments">
        No upstream models are configured: every call is served by the built-in engine. Add upstreams and models with <code>SVC_MODELS_FILE</code> (see
        docs/inference.md) to see their deployments here.
      </p>
    );
  return (
    <TableRegion label="Deployments">
      <table data-testid="deployments">
        <caption class="meta">Health is this server process's own view, learnt from its own calls: replicas may differ.</caption>
        <thead>
          <tr>
            <th scope="col">Model</th>
            <th scope="col">Upstream</th>
            <th scope="col">State</th>
            <th scope="col">Cooldown until</th>
            <th scope="col">Error rate</th>
            <th scope="col">Latency p50 / p95</th>
            <th scope="col">Calls</th>
          </tr>
        </thead>
        <tbody>
          {deployments.map((deployment) => (
            <tr key={`${deployment.model} ${deployment.upstream}`}>
              <td>
                <code>{deployment.model}</code>
              </td>
              <td>
                <code>{deployment.upstream}</code> <span class="meta">as {deployment.upstream_model}</span>
              </td>
              <td data-testid="deployment-state" class={deployment.state === 'healthy' ? undefined : 'warn'}>
                {STATE_WORDS[deployment.state]}
              </td>
              <td>
                {deployment.cooldown_until ? <time dateTime={deployment.cooldown_until}>{new Date(deployment.cooldown_until).toLocaleTimeString()}</time> : '–'}
              </td>
              <td data-testid="deployment-error-rate">
                {deployment.recent.calls === 0 ? '–' : percent(deployment.recent.error_rate)} <span class="meta">of the last {deployment.recent.calls}</span>
              </td>
              <td>
                {ms(deployment.recent.latency_ms_p50)} / {ms(deployment.recent.latency_ms_p95)}
              </td>
              <td>
                {deployment.calls}{' '}
                <span class="meta">
                  ({deployment.failures} failed, {deployment.in_flight} in flight)
                </span>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableRegion>
  );
}
