import path from 'node:path';
import type { Options } from 'tsup';
import { migrationNames } from '../src/db/migrations/discover.ts';

type EsbuildPlugin = NonNullable<Options['esbuildPlugins']>[number];

/**
 * For a build (tsup's dist, the start bundle): src/db/migrations/index.ts finds the migrations by
 * reading its folder, which a bundle no longer has. This plugin gives the build the same module
 * written as static imports of the files found at build time, in the same order, checked alike.
 */
export const migrationListPlugin: EsbuildPlugin = {
  name: 'svc-migration-list',
  setup(build) {
    build.onLoad({ filter: /[\\/]src[\\/]db[\\/]migrations[\\/]index\.ts$/ }, (args) => {
      const names = migrationNames(path.dirname(args.path));
      const imports = names.map((name, index) => `import m${index} from './${name}.ts';`).join('\n');
      const list = names.map((_, index) => `m${index}`).join(', ');
      return {
        loader: 'ts',
        resolveDir: path.dirname(args.path),
        contents: `${imports}\nimport { checkedMigrations } from './discover.ts';\nexport const migrations = checkedMigrations(${JSON.stringify(names)}, [${list}]);\n`,
      };
    });
  },
};
