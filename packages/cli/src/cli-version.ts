import { readFileSync } from 'node:fs';

/**
 * The CLI package's own version, from its package.json: one level above `src/` and the published
 * `dist/` alike. Reading it loads nothing else, so `svc --version` answers before the contract is
 * imported (about a second of start-up); the changesets `fixed` group keeps it equal to SVC_VERSION.
 */
export function cliVersion(): string {
  return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}
