// What every test lane shares with `pnpm test` (package.json's "ava": TypeScript as ES modules,
// child processes, the silent log level), so a lane config states only its files and limits.
import manifest from './package.json' with { type: 'json' };

/** A lane of its own: the main suite's settings with these files, one file at a time. */
export function lane({ files, timeout }) {
  return { ...manifest.ava, files, timeout, concurrency: 1 };
}
