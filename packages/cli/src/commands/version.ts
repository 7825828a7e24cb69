import type { Command } from 'commander';
import { cliVersion } from '../cli-version.ts';
import { withContext } from '../context.ts';

export function registerVersionCommands(program: Command): void {
  program
    .command('version')
    .description("Print the CLI's version and the server's, when it can be reached")
    .action(
      withContext(async (cli) => {
        let server: { version: string; api_version: string; url: string } | { error: string };
        try {
          const root = await cli.client().system.root(undefined, { retry: 0, timeout: 5_000 });
          server = { version: root.version, api_version: root.api_version, url: cli.client().baseUrl };
        } catch (error) {
          server = { error: (error as Error).message };
        }
        cli.output.result({ cli: cliVersion(), server }, (data) =>
          'error' in data.server
            ? `svc CLI ${data.cli}\nserver: unreachable (${data.server.error})`
            : `svc CLI ${data.cli}\nserver ${data.server.version} (interface ${data.server.api_version}) at ${data.server.url}`,
        );
      }),
    );
}
