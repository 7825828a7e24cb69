import { defineConfig } from 'tsup';

/**
 * The one build of every @svc package: ESM for Node 22+, declarations for the public entries
 * (every entry but the bin). An entry named in a record (`{ core: 'src/core.ts' }`) is written
 * as `dist/<name>.js`, the file its package.json's `exports` subpath names.
 */
export function packageBuild(entries: string[] | Record<string, string>) {
  const declared = Array.isArray(entries)
    ? entries.filter((entry) => !entry.endsWith('/bin.ts'))
    : Object.fromEntries(Object.entries(entries).filter(([name]) => name !== 'bin'));
  return defineConfig({
    entry: entries,
    format: ['esm'],
    target: 'node22',
    dts: { entry: declared },
    clean: true,
    sourcemap: true,
  });
}
