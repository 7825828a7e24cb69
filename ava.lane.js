// What every test lane shares with `pnpm test` (ava.config.js: TypeScript as ES modules, child
// processes, the silent log level, the compile cache), so a lane config states only its files and limits.
import main from './ava.config.js';

/** A lane of its own: the main suite's settings with these files, one file at a time. */
export function lane({ files, timeout }) {
  return { ...main, files, timeout, concurrency: 1 };
}
