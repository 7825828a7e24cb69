/**
 * Builds the web console into packages/server/console (vite.config.ts says why there). Run by
 * the root `postinstall`, so that on a fresh clone `pnpm start` serves /ui/ and `pnpm test` can
 * test it without a `pnpm build` first; `pnpm build` builds it again. A failed build is reported
 * and the install goes on: the server then answers /ui/ with `console_not_built`, naming the fix.
 */
import { fileURLToPath } from 'node:url';
import { build } from 'vite';

try {
  const root = fileURLToPath(new URL('..', import.meta.url));
  await build({ root, logLevel: 'error' });
  // The server's first paint of the public pages (src/first-paint.tsx), into packages/server/console-render.
  await build({ root, logLevel: 'error', build: { ssr: 'src/first-paint.tsx' } });
  process.stdout.write('svc: the web console is built (packages/server/console)\n');
} catch (error) {
  process.stderr.write(`svc: the web console was not built (${(error as Error).message}); \`pnpm build\` builds it\n`);
}
