import { packageBuild } from '../../tsup.shared.ts';
import { migrationListPlugin } from './scripts/migration-list-plugin.ts';
import { WORKER_MODULES } from './src/worker-modules.ts';

// Named entries keep dist's layout stable: the worker pools load `dist/<worker>.js` by file name.
export default {
  ...packageBuild({
    index: 'src/index.ts',
    bin: 'src/bin.ts',
    'db/embedded-process': 'src/db/embedded-process.ts',
    ...Object.fromEntries(Object.entries(WORKER_MODULES).map(([name, source]) => [name, `src/${source}`])),
  }),
  // The migrations are found by reading their folder; a bundle carries them as static imports.
  esbuildPlugins: [migrationListPlugin],
};
