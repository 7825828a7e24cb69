import { type Command, Help } from 'commander';
import { commandManifest, type CommandGroupId } from './manifest.ts';

type Register = (program: Command) => void;

/**
 * Every command group, in the order `svc --help` lists them; a feature adds its
 * `register…Commands` here (then `pnpm exec node packages/cli/scripts/build-command-manifest.ts`).
 * Each is imported only when its commands run, so a command loads its own module and contract
 * entry, not every feature's (start-up, issue 44).
 */
export const commandGroups: Record<CommandGroupId, () => Promise<Register>> = {
  health: async () => (await import('./health.ts')).registerHealthCommands,
  version: async () => (await import('./version.ts')).registerVersionCommands,
  catalog: async () => (await import('./catalog.ts')).registerCatalogCommands,
  download: async () => (await import('./download.ts')).registerDownloadCommands,
  blackboard: async () => (await import('./blackboard.ts')).registerBlackboardCommands,
  identity: async () => (await import('./identity.ts')).registerIdentityCommands,
  auth: async () => (await import('./identity.ts')).registerAuthCommands,
  config: async () => (await import('./config.ts')).registerConfigCommands,
  keys: async () => {
    const [{ registerKeysCommands }, { registerKeysReportCommand }, { registerKeysWebhookCommands }] = await Promise.all([
      import('./keys.ts'),
      import('./keys-report.ts'),
      import('./keys-webhook.ts'),
    ]);
    return (program) => {
      registerKeysCommands(program);
      // `svc keys report` (the operator's usage report) and `svc keys webhook`, under the group registerKeysCommands made.
      const keys = program.commands.find((command) => command.name() === 'keys')!;
      registerKeysReportCommand(keys);
      registerKeysWebhookCommands(keys);
    };
  },
  pdf: async () => (await import('./pdf.ts')).registerPdfCommands,
  inference: async () => (await import('./inference.ts')).registerInferenceCommands,
  try: async () => (await import('./inference.ts')).registerTryCommand,
  billing: async () => (await import('./billing.ts')).registerBillingCommands,
  receipts: async () => (await import('./receipts.ts')).registerReceiptCommands,
  requests: async () => (await import('./requests.ts')).registerRequestCommands,
  discover: async () => (await import('./discover.ts')).registerDiscoverCommands,
  jobs: async () => (await import('./jobs.ts')).registerJobsCommands,
  responses: async () => (await import('./responses.ts')).registerResponsesCommands,
  cache: async () => (await import('./cache.ts')).registerCacheCommands,
  upstreams: async () => (await import('./upstreams.ts')).registerUpstreamsCommands,
  mcp: async () => (await import('./mcp.ts')).registerMcpCommands,
  // Last: its script walks every command registered before it.
  completion: async () => (await import('./completion.ts')).registerCompletionCommand,
};

/** Registers every command group, in order (completion, `buildProgram`). */
export async function registerCommands(program: Command): Promise<void> {
  const registers = await Promise.all(Object.values(commandGroups).map((load) => load()));
  for (const register of registers) register(program);
}

/** Global options that take a value: the word after them is not a command name. */
const VALUE_OPTIONS = new Set(['--base-url', '--api-url', '--token', '--profile']);

/** The first operand of the command line (the command's name), skipping global options and their values. */
function commandWord(args: string[]): string | undefined {
  for (let index = 0; index < args.length; index++) {
    const word = args[index]!;
    if (word === '--') return args[index + 1];
    if (!word.startsWith('-')) return word;
    if (VALUE_OPTIONS.has(word)) index += 1;
  }
  return undefined;
}

/**
 * Registers what this command line needs: the one group that owns its command, or, for the
 * program's own help, every group as a stub named and described from the manifest (no module
 * loaded). Anything else (completion, `help <command>`, an unknown word) registers every group.
 */
export async function registerCommandsFor(program: Command, args: string[]): Promise<void> {
  const word = commandWord(args);
  const owner = word === undefined ? undefined : commandManifest.find((entry) => entry.names.includes(word));
  if (owner && owner.group !== 'completion') {
    (await commandGroups[owner.group]())(program);
    return;
  }
  if (word === undefined || (word === 'help' && commandWord(args.slice(args.indexOf('help') + 1)) === undefined)) {
    const terms = new Map<string, string>();
    for (const entry of commandManifest) {
      for (const stub of entry.commands) {
        const command = program.command(stub.name).description(stub.description);
        for (const alias of stub.aliases) command.alias(alias);
        terms.set(stub.name, stub.term);
      }
    }
    const standard = new Help();
    program.configureHelp({ subcommandTerm: (command) => terms.get(command.name()) ?? standard.subcommandTerm(command) });
    return;
  }
  await registerCommands(program);
}
