/**
 * `pnpm new:feature <name>`: writes a working feature, as Rails' generators write a resource.
 * A feature `widgets` gets its contract in one file (`packages/schemas/src/widgets/index.ts`: routes,
 * errors and its entry), its server folder (`features/widgets/`: index.ts with `createWidgetsFeature`,
 * handlers.ts holding the store and the handlers, widgets-config.ts), a migration, a test and a docs
 * page: seven files; a feature that grows splits them as the older ones are (contract.ts and
 * errors.ts; a `<f>-store.ts`). And two registration lines, each with its import: the contract
 * list (`packages/schemas/src/contract.ts`: the entry, and an `export *` so @svc/schemas exports
 * its schemas) and the feature list (`packages/server/src/features/index.ts`: one `.add` line
 * naming the feature, its settings parser and how it is built). Its settings are typed into
 * `deps.config` by its `<f>-config.ts` (declaration merging), so no central file types them.
 * config-each-feature.test.ts derives the setting's wrong-value row from its schema, so it needs
 * no edit.
 * What it writes is a paged list with an operator view and a per-principal cap: the recipes of
 * docs/contributing.md, to rename and reshape.
 *
 * Options: `--root <dir>` writes into another copy of the repository (the generator's test uses
 * one); `--timestamp <yyyymmddThhmm>` names the migration (default: now, UTC).
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { featureFiles, type FeatureNames } from './new-feature-templates.ts';

const FEATURE_NAME = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;

export function namesOf(name: string): FeatureNames {
  if (!FEATURE_NAME.test(name))
    throw new Error(`a feature's name is lower-case words joined by dashes (kebab case), like "widgets" or "saved-searches": not ${JSON.stringify(name)}`);
  const words = name.split('-');
  const camel =
    words[0] +
    words
      .slice(1)
      .map((word) => word[0]!.toUpperCase() + word.slice(1))
      .join('');
  return {
    kebab: name,
    camel,
    pascal: camel[0]!.toUpperCase() + camel.slice(1),
    snake: words.join('_'),
    env: `SVC_${words.join('_').toUpperCase()}`,
  };
}

/** Inserts `line` after the last line matching `after`, refusing a file that has no such line. */
function insertAfterLast(text: string, after: RegExp, line: string, file: string): string {
  const lines = text.split('\n');
  const index = lines.findLastIndex((candidate) => after.test(candidate));
  if (index < 0) throw new Error(`${file}: no line matching ${after} to register after`);
  lines.splice(index + 1, 0, line);
  return lines.join('\n');
}

/** Inserts `line` before the first line equal to `closing` that follows the line starting with `opening`. */
function insertBeforeClosing(text: string, opening: string, closing: string, line: string, file: string): string {
  const lines = text.split('\n');
  const start = lines.findIndex((candidate) => candidate.startsWith(opening));
  const end = start < 0 ? -1 : lines.findIndex((candidate, index) => index > start && candidate === closing);
  if (end < 0) throw new Error(`${file}: no list opened by ${JSON.stringify(opening)} and closed by ${JSON.stringify(closing)}`);
  lines.splice(end, 0, line);
  return lines.join('\n');
}

/** The registration lines: an import and one list entry in each of the two lists. */
function registrations(names: FeatureNames): Array<{ file: string; edit: (text: string, file: string) => string }> {
  const { kebab, camel, pascal } = names;
  return [
    {
      file: 'packages/schemas/src/contract.ts',
      edit: (text, file) =>
        insertBeforeClosing(
          insertAfterLast(
            text,
            /^export \* from '\.\/[a-z0-9-]+\/index\.ts';$/,
            `import { ${camel}FeatureContract } from './${kebab}/index.ts';\nexport * from './${kebab}/index.ts';`,
            file,
          ),
          'const featureContracts = [',
          '] as const;',
          `  ${camel}FeatureContract,`,
          file,
        ),
    },
    {
      file: 'packages/server/src/features/index.ts',
      // The line goes first in the list: a new feature is given nothing by the features above it
      // (move it below those it comes to need), and the list's last line ends the statement.
      edit: (text, file) =>
        insertAfterLast(
          insertAfterLast(
            text,
            /^import \{ create[A-Za-z0-9]+Feature \} from '\.\/[a-z0-9-]+\/index\.ts';$/,
            `import { create${pascal}Feature, ${camel}ConfigFrom } from './${kebab}/index.ts';`,
            file,
          ),
          /^export const featureList = new FeatureList<.*>\(\)$/,
          `  .add('${camel}', { ${camel}: ${camel}ConfigFrom }, (deps) => create${pascal}Feature(deps))`,
          file,
        ),
    },
  ];
}

const utcStamp = (date: Date) => date.toISOString().slice(0, 16).replace(/[-:]/g, '');

/** Writes the feature under `root`; answers the files written and the files edited, relative to it. */
export async function newFeature(name: string, options: { root: string; timestamp?: string }): Promise<{ written: string[]; edited: string[] }> {
  const names = namesOf(name);
  const timestamp = options.timestamp ?? utcStamp(new Date());
  if (!/^\d{8}T\d{4}$/.test(timestamp)) throw new Error(`--timestamp is yyyymmddThhmm (UTC), like 20261207T0300: not ${timestamp}`);
  const files = featureFiles(names, timestamp);
  for (const file of Object.keys(files))
    if (existsSync(path.join(options.root, file))) throw new Error(`${file} is there already: the feature "${name}" exists (nothing was written)`);
  const edits = registrations(names);
  // Every edit is made in memory first, so a list the generator cannot find writes nothing.
  const edited = await Promise.all(edits.map(async ({ file, edit }) => ({ file, text: edit(await readFile(path.join(options.root, file), 'utf8'), file) })));
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(options.root, file)), { recursive: true });
    await writeFile(path.join(options.root, file), text);
  }
  for (const { file, text } of edited) await writeFile(path.join(options.root, file), text);
  return { written: Object.keys(files), edited: edited.map(({ file }) => file) };
}

if (import.meta.url === `file://${process.argv[1]}` || fileURLToPath(import.meta.url) === process.argv[1]) {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { root: { type: 'string' }, timestamp: { type: 'string' } },
  });
  if (positionals.length !== 1) {
    process.stderr.write('usage: pnpm new:feature <name> [--root <dir>] [--timestamp <yyyymmddThhmm>]\n');
    process.exit(2);
  }
  const root = path.resolve(values.root ?? fileURLToPath(new URL('..', import.meta.url)));
  try {
    const { written, edited } = await newFeature(positionals[0]!, { root, timestamp: values.timestamp });
    process.stdout.write(`written:\n${written.map((file) => `  ${file}`).join('\n')}\nregistered in:\n${edited.map((file) => `  ${file}`).join('\n')}\n`);
    process.stdout.write(
      "next: pnpm exec biome format --write on these files, pnpm exec node packages/client/scripts/build-operation-types.ts (the client's named types; pnpm typecheck fails until then), pnpm exec node packages/server/scripts/build-pglite-template.ts, and the test.\n",
    );
  } catch (error) {
    process.stderr.write(`new:feature: ${(error as Error).message}\n`);
    process.exit(1);
  }
}
