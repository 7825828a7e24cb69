import { defineConfig } from 'tsup';

/** The one build of every @svc package: ESM for Node 22+, declarations for the public entry. */
export function packageBuild(entries: string[] | Record<string, string>) {
  return defineConfig({
    entry: entries,
    format: ['esm'],
    target: 'node22',
    dts: { entry: 'src/index.ts' },
    clean: true,
    sourcemap: true,
  });
}
