/**
 * Writes `packages/cli/src/commands/manifest.ts`: each command group's top-level commands (names,
 * aliases, descriptions and help terms), read from the groups themselves. The CLI finds the one
 * module a command line needs from it, and prints `svc --help` from it without loading any.
 * `--check` fails (exit 1) when the file differs from what the groups register now.
 *
 * Run: pnpm exec node packages/cli/scripts/build-command-manifest.ts [--check]
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { commandGroups } from '../src/commands/index.ts';
import { commandManifest } from '../src/commands/manifest.ts';

const manifestFile = fileURLToPath(new URL('../src/commands/manifest.ts', import.meta.url));
const program = new Command('svc');
const help = program.createHelp();
const manifest: Array<{ group: string; names: string[]; commands: Array<{ name: string; aliases: string[]; description: string; term: string }> }> = [];
for (const [group, load] of Object.entries(commandGroups)) {
  const before = program.commands.length;
  (await load())(program);
  const commands = program.commands.slice(before).map((command) => ({
    name: command.name(),
    aliases: command.aliases(),
    description: command.description(),
    term: help.subcommandTerm(command),
  }));
  manifest.push({ group, names: commands.flatMap((command) => [command.name, ...command.aliases]), commands });
}

if (process.argv.includes('--check')) {
  if (!isDeepStrictEqual(JSON.parse(JSON.stringify(commandManifest)), manifest)) {
    process.stderr.write(`${manifestFile} is out of date: run pnpm exec node packages/cli/scripts/build-command-manifest.ts\n`);
    process.exit(1);
  }
} else {
  const groups = manifest.map((entry) => JSON.stringify(entry.group)).join(' | ');
  writeFileSync(
    manifestFile,
    `// Written by packages/cli/scripts/build-command-manifest.ts from the command groups (commands/index.ts); do not edit.
/** A command group's key in \`commandGroups\`. */
export type CommandGroupId = ${groups};

/** One command group's top-level commands: what \`svc --help\` lists, and how a command line finds its group. */
export interface CommandGroupManifest {
  readonly group: CommandGroupId;
  /** Its commands' names and aliases. */
  readonly names: readonly string[];
  readonly commands: ReadonlyArray<{ readonly name: string; readonly aliases: readonly string[]; readonly description: string; readonly term: string }>;
}

export const commandManifest: readonly CommandGroupManifest[] = ${JSON.stringify(manifest, null, 2)};
`,
  );
  execFileSync('node_modules/.bin/biome', ['format', '--write', manifestFile], { cwd: fileURLToPath(new URL('../../..', import.meta.url)), stdio: 'inherit' });
}
