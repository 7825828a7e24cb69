import type { Command } from 'commander';
import type { DeploymentHealthInfo } from '@svc/schemas';
import { withContext } from '../context.ts';
import { table } from '../output.ts';

const milliseconds = (value: number | null) => (value === null ? '-' : `${Math.round(value)} ms`);

/** One deployment as a row: what an operator scans for (state, load, errors, latency, when a cooldown ends). */
function row(item: DeploymentHealthInfo): string[] {
  return [
    item.model,
    `${item.upstream}/${item.upstream_model}`,
    item.state,
    String(item.weight),
    item.max_in_flight === null ? String(item.in_flight) : `${item.in_flight}/${item.max_in_flight}`,
    `${(item.recent.error_rate * 100).toFixed(1)}% of ${item.recent.calls}`,
    milliseconds(item.recent.latency_ms_p50),
    milliseconds(item.recent.latency_ms_p95),
    item.cooldown_until ?? '-',
  ];
}

/** `svc upstreams health`: every upstream model deployment as the server process answering sees it (GET /v1/upstreams/health, operator). */
export function registerUpstreamsCommands(program: Command): void {
  program
    .command('upstreams')
    .description('Upstream model deployments')
    .command('health')
    .description(
      "Each deployment's state, calls in flight, recent error rate and latency, and cooldown end, as the answering server process sees them (operator token)",
    )
    .action(
      withContext(async (cli) => {
        const report = await cli.client().upstreams.health();
        cli.output.result(report, ({ data }) =>
          data.length === 0
            ? 'no upstream models are configured'
            : table([['MODEL', 'DEPLOYMENT', 'STATE', 'WEIGHT', 'IN FLIGHT', 'ERRORS (RECENT)', 'P50', 'P95', 'COOLDOWN UNTIL'], ...data.map(row)]),
        );
      }),
    );
}
