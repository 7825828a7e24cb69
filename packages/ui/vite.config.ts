import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The console is served by svc-server under /ui/ and shipped inside @svc/server's package, so
 * the build writes into packages/server/console (published beside dist/ and assets/).
 * Asset names carry a content hash: the server caches them for a year and index.html never.
 *
 * `vite build --ssr src/first-paint.tsx` builds the server's first paint of the public pages
 * (first-paint.tsx) into packages/server/console-render: one module the server imports, with
 * Preact, micromark and the app's components inside it. @svc/schemas and zod stay outside: the
 * server has them, and one copy of the contract's schemas is enough.
 */
export default defineConfig(({ isSsrBuild }) => ({
  base: '/ui/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  ssr: { noExternal: true },
  build: isSsrBuild
    ? {
        outDir: fileURLToPath(new URL('../server/console-render', import.meta.url)),
        emptyOutDir: true,
        target: 'node22',
        sourcemap: false,
        rolldownOptions: { external: [/^@svc\/schemas/, /^zod/], output: { entryFileNames: '[name].js' } },
      }
    : {
        outDir: fileURLToPath(new URL('../server/console', import.meta.url)),
        emptyOutDir: true,
        target: 'es2022',
        // The polyfill is for browsers without <link rel=modulepreload>; every supported one has it.
        modulePreload: { polyfill: false },
        reportCompressedSize: true,
        // .vite/manifest.json: which chunks a lazy page needs, so the server can preload them in that page's HTML (console/first-load.ts).
        manifest: true,
        sourcemap: false,
        // Modules run in their source order whatever chunk they land in: zod-jitless.ts must run
        // before any schema is built, and without this the chunk of zod and the schemas ran first.
        rolldownOptions: { output: { strictExecutionOrder: true } },
      },
}));
