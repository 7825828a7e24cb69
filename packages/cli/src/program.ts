import { Command, CommanderError, Option } from 'commander';
import { SvcError } from '@svc/client';
import { cliVersion } from './cli-version.ts';
import { registerCommands } from './commands/index.ts';
import { CliFailure, UsageError } from './failure.ts';
import { jsonText, terminalSafe } from './terminal-safe.ts';

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

export function buildProgram(): Command {
  const program = new Command('svc')
    .description('The svc command line: blackboard posts, verified downloads, inference and account work against an svc server.')
    .version(cliVersion(), '-v, --version', 'print the CLI version')
    .addOption(new Option('--base-url <url>', 'base surface URL').env('SVC_BASE_URL'))
    .addOption(new Option('--api-url <url>', 'api surface URL (blackboard, catalog); defaults to the base URL').env('SVC_API_URL'))
    .addOption(new Option('--token <token>', 'bearer token or developer key').env('SVC_TOKEN'))
    .addOption(new Option('--profile <name>', 'settings profile (svc config); flags and SVC_* variables win over it').env('SVC_PROFILE'))
    .option('--json', 'print machine-readable JSON')
    .showHelpAfterError('(run with --help for usage)')
    .showSuggestionAfterError()
    .exitOverride()
    .configureOutput({ outputError: (message, write) => write(message) });
  registerCommands(program);
  // Subcommands inherit exit handling so a usage error anywhere exits with 2.
  for (const command of program.commands) command.exitOverride();
  return program;
}

function describe(error: SvcError): string {
  const facts = [error.code, error.status ? `HTTP ${error.status}` : undefined, error.requestId ? `request ${error.requestId}` : undefined].filter(Boolean);
  return `error: ${error.message} (${facts.join(', ')})`;
}

/** Runs the CLI and answers its exit code: 0 ok, 1 failure, 2 usage error. */
export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return EXIT_OK;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') return EXIT_OK;
      return error.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    }
    if (error instanceof UsageError) {
      process.stderr.write(`error: ${terminalSafe(error.message)}\n(run with --help for usage)\n`);
      return EXIT_USAGE;
    }
    if (error instanceof CliFailure) {
      if (!error.silent) process.stderr.write(`error: ${terminalSafe(error.message)}\n`);
      return error.exitCode;
    }
    if (SvcError.isInstance(error)) {
      // With --json the error is JSON too, so scripts can branch on its stable code.
      const asJson = argv.includes('--json');
      process.stderr.write(
        asJson
          ? `${jsonText({ error: error.message, code: error.code, status: error.status, request_id: error.requestId })}\n`
          : `${terminalSafe(describe(error))}\n`,
      );
      return EXIT_FAILURE;
    }
    if (error instanceof TypeError) {
      process.stderr.write(`error: ${terminalSafe(error.message)}\n`);
      return EXIT_USAGE;
    }
    process.stderr.write(`error: ${terminalSafe((error as Error).message ?? String(error))}\n`);
    return EXIT_FAILURE;
  }
}
