import type { Command } from 'commander';
import { withContext } from '../context.ts';
import { CliFailure } from '../failure.ts';

export function registerHealthCommands(program: Command): void {
  program
    .command('health')
    .description('Check that the server is up and reaches its database')
    .action(
      withContext(async (cli) => {
        const { data, response } = await cli.client().withResponse.system.healthz();
        cli.output.result(
          data,
          (health) =>
            `${health.status}  svc ${health.version}  database ${health.database.kind} ${health.database.status} (${health.database.latency_ms} ms)  uptime ${health.uptime_seconds} s`,
        );
        if (response.status !== 200) throw new CliFailure('the server is degraded', { silent: true });
      }),
    );
}
