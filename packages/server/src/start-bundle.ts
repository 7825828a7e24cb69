import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * The start bundle: the server's command (`cli.ts`, with the workspace's sources and most of its
 * dependencies) built by esbuild into a few files under `packages/server/dist-start/` at install
 * time (scripts/build-start-bundle.ts, run by the root `postinstall`). `svc-server start` from
 * the workspace runs it instead of the TypeScript sources when it is up to date with them: Node
 * then resolves and loads a few dozen files instead of about 1,800 (measured: 0.4 to 0.5 s less
 * CPU for the server's process before its first answer, bench/cold-start).
 *
 * A bundle must never run older code than the sources. The build records every workspace file it
 * read (and the lockfile, which changes with any dependency) with its modification time and
 * size; a start whose check finds one changed, missing or unreadable runs the sources instead,
 * as a start without a bundle does. Only the start is faster; nothing else differs.
 *
 * Each build goes to a directory of its own and the manifest, written last, names it: a server
 * still running from the previous build loads its lazily imported parts (the PDF engines, x402)
 * from files a new build (`pnpm install`) does not touch. The build before is kept for it.
 */
export const START_BUNDLE_DIRECTORY = fileURLToPath(new URL('../node_modules/.cache/svc-start/', import.meta.url));

/** Written last by the build, so a bundle cut short has no manifest and is never run. */
export const START_BUNDLE_MANIFEST = 'manifest.json';

/** The bundle's entry: the server's command, as src/cli.ts is from the sources. */
export const START_BUNDLE_ENTRY = 'cli.js';

export interface StartBundleManifest {
  /** The build's directory, under START_BUNDLE_DIRECTORY. */
  build: string;
  /** Each input, relative to START_BUNDLE_DIRECTORY: [modification time in ms, size in bytes]. */
  inputs: Record<string, [number, number]>;
}

/** Modification time and size of `file`, or undefined when it cannot be read. */
export function fileStamp(file: string): [number, number] | undefined {
  const stats = statSync(file, { throwIfNoEntry: false });
  return stats ? [stats.mtimeMs, stats.size] : undefined;
}

/**
 * The URL of the bundle's entry when the bundle in `directory` is complete and every input it
 * recorded is unchanged; otherwise undefined (run the sources). Costs one stat per input
 * (about 330: a few milliseconds).
 */
export function freshStartBundle(directory = START_BUNDLE_DIRECTORY): URL | undefined {
  let manifest: StartBundleManifest;
  try {
    manifest = JSON.parse(readFileSync(path.join(directory, START_BUNDLE_MANIFEST), 'utf8')) as StartBundleManifest;
  } catch {
    return undefined;
  }
  for (const [input, [mtimeMs, size]] of Object.entries(manifest.inputs)) {
    const stamp = fileStamp(path.resolve(directory, input));
    if (!stamp || stamp[0] !== mtimeMs || stamp[1] !== size) return undefined;
  }
  return pathToFileURL(path.join(directory, manifest.build, START_BUNDLE_ENTRY));
}
