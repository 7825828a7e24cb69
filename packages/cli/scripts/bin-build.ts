/**
 * The published `svc` bin (dist/bin.js) as one bundle: the CLI with @svc/client, @svc/schemas and
 * their dependencies (zod, ky, ...) compiled in, so a command loads a few files instead of a few
 * hundred modules, and zod's 60+ locale modules are tree-shaken (only English is used). Start-up
 * of `svc board get` is the user's wait (issue 44). commander and cli-progress, the CLI's own
 * dependencies, stay external: they are CommonJS, which an ESM bundle cannot `require` node
 * built-ins from. The library entry (dist/index.js) is built apart, unbundled, by tsup.config.ts.
 *
 * Used by build-bin.ts (the package build), by cli-bundle.test.ts and by bench/cli-start.ts.
 */
import { cp, mkdir, readFile, symlink } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Options } from 'tsup';

type EsbuildPlugin = NonNullable<Options['esbuildPlugins']>[number];

const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));

/**
 * `import { z } from 'zod'` binds zod's namespace object to a name, and esbuild then keeps the
 * whole namespace, every locale with it (758 KB for one schema); `import * as z from 'zod'`, zod's
 * documented form, is shaken to what is used (170 KB). Both give the same `z`: zod's root exports
 * everything its `z` does. So the bundled sources are read with the second form.
 */
export const zodNamespaceImports: EsbuildPlugin = {
  name: 'zod-namespace-imports',
  setup(build) {
    build.onLoad({ filter: /[\\/]packages[\\/](schemas|client|cli)[\\/]src[\\/].*\.ts$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      return { contents: source.replace(/^import \{ z \} from 'zod';$/gm, "import * as z from 'zod';"), loader: 'ts' };
    });
  },
};

/** The bin's build into `outDir`. It never cleans `outDir`: the library's build writes there first. */
export function binBuildOptions(outDir: string): Options {
  return {
    entry: { bin: path.join(PACKAGE_DIR, 'src/bin.ts') },
    outDir,
    format: ['esm'],
    platform: 'node',
    target: 'node22',
    // Commands are loaded on demand (src/commands/index.ts): each stays its own chunk.
    splitting: true,
    sourcemap: true,
    clean: false,
    dts: false,
    // Everything else is bundled, whichever package.json tsup reads its dependencies from (the
    // working directory's): the package build's and a test's, run from the root, are the same.
    external: ['commander', 'cli-progress'],
    noExternal: [/^(?!(commander|cli-progress)(\/|$))/],
    esbuildPlugins: [zodNamespaceImports],
  };
}

/**
 * The bin built as it is installed, for tests and benches: `<dir>/dist/bin.js` beside a copy of the
 * package.json (the CLI reads its version from it) and the package's node_modules (commander and
 * cli-progress), without touching packages/cli/dist. Answers the bin's path.
 */
export async function buildInstalledBin(dir: string): Promise<string> {
  const { build } = await import('tsup');
  await mkdir(dir, { recursive: true });
  await cp(path.join(PACKAGE_DIR, 'package.json'), path.join(dir, 'package.json'));
  await symlink(path.join(PACKAGE_DIR, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  await build({ ...binBuildOptions(path.join(dir, 'dist')), config: false, silent: true });
  return path.join(dir, 'dist', 'bin.js');
}
