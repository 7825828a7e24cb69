/**
 * Builds the start bundle (src/start-bundle.ts says what it is and when it runs). Run by the
 * root `postinstall` and by `pnpm build:start`; a directory given as argument (under
 * packages/server, so that the packages left external resolve) is written instead of
 * START_BUNDLE_DIRECTORY: the start-bundle test builds its own. A failed build is reported and
 * leaves the manifest out: `svc-server start` then runs the sources, as before, so an install
 * never fails for it.
 */
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'tsup';
import { migrationListPlugin } from './migration-list-plugin.ts';
import { fileStamp, START_BUNDLE_DIRECTORY, START_BUNDLE_MANIFEST, type StartBundleManifest } from '../src/start-bundle.ts';
import { WORKER_MODULES } from '../src/worker-modules.ts';

const packageDirectory = fileURLToPath(new URL('..', import.meta.url));
const lockfile = fileURLToPath(new URL('../../../pnpm-lock.yaml', import.meta.url));
const directory = process.argv[2] ? path.resolve(process.argv[2]) : START_BUNDLE_DIRECTORY;
const manifestFile = path.join(directory, START_BUNDLE_MANIFEST);

/**
 * Left to Node at run time:
 * - packages that load files beside their own (WebAssembly, worker scripts, data), which must
 *   stay where they are installed;
 * - optional drivers Sequelize and pg require only when configured;
 * - packages the server imports lazily (`import()` on first use): they are not on the start's
 *   path, and esbuild would give a lazily imported CommonJS package no named exports, where
 *   Node gives it some. The build refuses a lazily imported package missing from this list.
 * Everything else, the workspace's @svc packages included, is bundled.
 */
const keptExternal = [
  ...['@electric-sql/pglite', '@electric-sql/pglite-socket', '@embedpdf/pdfium', 'mupdf', 'pdfjs-dist', 're2-wasm', 'piscina'],
  ...['pg-native', 'pg-hstore'],
  ...['umzug', 'tar', 'mammoth', 'mathjs', 'stripe', '@google-cloud/storage', '@x402/evm', 'viem', '@opentelemetry/api', '@opentelemetry/sdk-node'],
];
const bundled = new RegExp(`^(?!(?:${keptExternal.map((name) => name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|')})(?:/|$))`);

type Metafile = { inputs: Record<string, { imports: Array<{ path: string; kind: string; external?: boolean; original?: string }> }> };

const inNodeModules = (file: string) => file.split(/[\\/]/).includes('node_modules');

/** Packages the workspace's code imports lazily that the bundle nevertheless carries (see keptExternal). */
function lazilyBundledPackages(metafile: Metafile): string[] {
  const imports = Object.entries(metafile.inputs).flatMap(([file, input]) => (inNodeModules(file) ? [] : input.imports));
  return [
    ...new Set(
      imports.filter((entry) => entry.kind === 'dynamic-import' && !entry.external && inNodeModules(entry.path)).map((entry) => entry.original ?? entry.path),
    ),
  ];
}

/** Builds into a new directory and answers its manifest (not yet written). */
async function buildStartBundle(): Promise<StartBundleManifest> {
  const buildName = `build-${Date.now().toString(36)}`;
  const outDir = path.join(directory, buildName);
  await build({
    config: false,
    silent: true,
    entry: { cli: 'src/cli.ts', ...Object.fromEntries(Object.entries(WORKER_MODULES).map(([name, source]) => [name, `src/${source}`])) },
    outDir,
    format: ['esm'],
    platform: 'node',
    target: 'node24',
    splitting: true,
    sourcemap: true,
    dts: false,
    metafile: true,
    // Entries above and the metafile's inputs below are relative to this package, wherever the
    // build is run from (the root's postinstall runs it from the root; esbuild would otherwise
    // keep the directory the process started in).
    esbuildOptions(options) {
      options.absWorkingDir = packageDirectory;
    },
    // The migrations are found by reading their folder; the bundle carries them as static imports.
    esbuildPlugins: [migrationListPlugin],
    noExternal: [bundled],
    external: keptExternal,
    // Bundled CommonJS calls `require` (Node's built-ins, the drivers above); an ES module has none.
    banner: { js: "import { createRequire as __svcCreateRequire } from 'node:module'; const require = __svcCreateRequire(import.meta.url);" },
  });
  // Under node_modules no package.json says these files are ES modules, and Node would parse each
  // twice to find out (measured: 76 ms of a start).
  await writeFile(path.join(outDir, 'package.json'), '{ "type": "module" }\n');
  const metafileFile = path.join(outDir, 'metafile-esm.json');
  const metafile = JSON.parse(await readFile(metafileFile, 'utf8')) as Metafile;
  await rm(metafileFile);
  const lazy = lazilyBundledPackages(metafile);
  if (lazy.length > 0) throw new Error(`imported lazily yet bundled, add to keptExternal in ${fileURLToPath(import.meta.url)}: ${lazy.join(', ')}`);
  // Dependencies are stood for by the lockfile: a workspace file is checked one by one.
  const sources = Object.keys(metafile.inputs).filter((input) => !inNodeModules(input));
  const manifest: StartBundleManifest = { build: buildName, inputs: {} };
  for (const file of [...sources.map((input) => path.resolve(packageDirectory, input)), lockfile]) {
    const stamp = fileStamp(file);
    if (!stamp) throw new Error(`the bundle's input ${file} cannot be read`);
    manifest.inputs[path.relative(directory, file)] = stamp;
  }
  return manifest;
}

/** Removes every build but `keep` (the builds a running server may still load parts from). */
async function pruneBuilds(keep: string[]): Promise<void> {
  const entries = await readdir(directory).catch(() => []);
  await Promise.all(
    entries
      .filter((entry) => entry.startsWith('build-') && !keep.includes(entry))
      .map((entry) => rm(path.join(directory, entry), { recursive: true, force: true })),
  );
}

const started = performance.now();
// tsup finds the entries from the working directory, esbuild from absWorkingDir (above).
process.chdir(packageDirectory);
await mkdir(directory, { recursive: true });
const previous = await readFile(manifestFile, 'utf8').then(
  (text) => (JSON.parse(text) as StartBundleManifest).build,
  () => undefined,
);
try {
  const manifest = await buildStartBundle();
  const partial = `${manifestFile}.${process.pid}.partial`;
  await writeFile(partial, JSON.stringify(manifest));
  await rename(partial, manifestFile);
  await pruneBuilds([manifest.build, ...(previous ? [previous] : [])]);
  process.stdout.write(
    `svc: start bundle written to ${path.join(directory, manifest.build)} (${Object.keys(manifest.inputs).length - 1} sources, ${((performance.now() - started) / 1000).toFixed(1)} s)\n`,
  );
} catch (error) {
  await rm(manifestFile, { force: true });
  await pruneBuilds(previous ? [previous] : []);
  process.stderr.write(`svc: the start bundle was not built (svc-server start runs the TypeScript sources instead): ${(error as Error).message}\n`);
}
