import { Command, CommanderError, Option } from 'commander';
import type { SvcError } from '@svc/client/core';
import { cliVersion } from './cli-version.ts';
import { registerCommands, registerCommandsFor } from './commands/index.ts';
import { CliFailure, UsageError } from './failure.ts';
import { jsonText, terminalSafe } from './terminal-safe.ts';

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** The program with its global options and no commands yet. */
function rootProgram(): Command {
  return new Command('svc')
    .description('The svc command line: blackboard posts, verified downloads, inference and account work against an svc server.')
    .version(cliVersion(), '-v, --version', 'print the CLI version')
    .addOption(new Option('--base-url <url>', 'base surface URL').env('SVC_BASE_URL'))
    .addOption(new Option('--api-url <url>', 'api surface URL (blackboard, catalog); defaults to the base URL').env('SVC_API_URL'))
    .addOption(new Option('--token <token>', 'bearer token or developer key').env('SVC_TOKEN'))
    .addOption(new Option('--profile <name>', 'settings profile (svc config); flags and SVC_* variables win over it').env('SVC_PROFILE'))
    .addOption(
      new Option(
        '--idle-timeout <seconds>',
        'give up on a download or a streamed answer that sends nothing this long; a board watch reconnects instead (default 60; 0: never)',
      ).env('SVC_IDLE_TIMEOUT'),
    )
    .option('--json', 'print machine-readable JSON')
    .showHelpAfterError('(run with --help for usage)')
    .showSuggestionAfterError()
    .exitOverride()
    .configureOutput({ outputError: (message, write) => write(message) });
}

/** Subcommands inherit exit handling so a usage error anywhere exits with 2. */
function withExitOverride(program: Command): Command {
  for (const command of program.commands) command.exitOverride();
  return program;
}

/** The whole program, every command group loaded (what completion walks). */
export async function buildProgram(): Promise<Command> {
  const program = rootProgram();
  await registerCommands(program);
  return withExitOverride(program);
}

/** The program as this command line needs it: only the group that owns its command is loaded. */
export async function programFor(argv: string[]): Promise<Command> {
  const program = rootProgram();
  await registerCommandsFor(program, argv.slice(2));
  return withExitOverride(program);
}

function describe(error: SvcError): string {
  const facts = [error.code, error.status ? `HTTP ${error.status}` : undefined, error.requestId ? `request ${error.requestId}` : undefined].filter(Boolean);
  return `error: ${error.message} (${facts.join(', ')})`;
}

/** Runs the CLI and answers its exit code: 0 ok, 1 failure, 2 usage error. */
export async function main(argv: string[]): Promise<number> {
  const program = await programFor(argv);
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
    // The client's errors are loaded only here: `svc --help` needs neither the client nor zod.
    const { SvcError } = await import('@svc/client/core');
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
