#!/usr/bin/env node
/**
 * The `svc-server` command of the workspace (`pnpm start`, the tests' and benches' server
 * process), in plain JavaScript. Node loads its TypeScript stripper (amaro) for the first `.ts`
 * file a process reads, unless that file's stripped code is in a compile cache turned on before
 * it: so this first step turns on Node's compile cache (its default directory, the one bin.ts's
 * re-run is given: launch.ts) and only then imports bin.ts. The process that bin.ts replaces
 * with itself (V8 settings, compile cache) then never loads amaro: its CPU before the re-run went
 * from 224-320 ms to 93-133 ms (five starts each, 2 cores at load 28; issue 42's cold start). A user's NODE_COMPILE_CACHE or NODE_DISABLE_COMPILE_CACHE
 * is left to Node. The published package runs its build (dist/bin.js) instead.
 */
import module from 'node:module';

// The workspace's source is TypeScript that Node strips as it loads it (Node 24, which pnpm pins
// for the workspace's scripts). Run by an older system Node directly, the import below fails with
// ERR_UNKNOWN_FILE_EXTENSION and a stack: say what to run instead.
if (!process.features.typescript) {
  process.stderr.write(
    `error: the workspace's source is TypeScript, which Node.js 24 runs as it is (pnpm pins Node 24 for the workspace's scripts); this Node.js ${process.version} cannot. Run: pnpm start (or pnpm exec svc-server)\n`,
  );
  process.exit(1);
}
if (process.env.NODE_COMPILE_CACHE === undefined && process.env.NODE_DISABLE_COMPILE_CACHE === undefined) module.enableCompileCache?.();
await import('../src/bin.ts');
