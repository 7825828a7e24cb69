#!/usr/bin/env node
/**
 * The `svc` command of the workspace (the tests' and benches' CLI process, `pnpm svc`), in plain
 * JavaScript, as `svc-server` starts through packages/server/bin/svc-server.js. Node loads its
 * TypeScript stripper (amaro, about 0.15-0.3 s of CPU) for the first `.ts` file a process reads,
 * unless that file's stripped code is in a compile cache turned on before it: src/bin.ts turns the
 * cache on too late to spare itself. So this first step turns the cache on (Node's default
 * directory) and only then imports bin.ts, and a CLI process from the workspace never loads amaro
 * once the cache is warm. A user's NODE_COMPILE_CACHE or NODE_DISABLE_COMPILE_CACHE is left to
 * Node. The published package runs its build (dist/bin.js), which is JavaScript already.
 */
import module from 'node:module';

// The workspace's source is TypeScript that Node strips as it loads it (Node 24, which pnpm pins
// for the workspace's scripts). Run by an older system Node directly, the import below fails with
// ERR_UNKNOWN_FILE_EXTENSION and a stack: say what to run instead.
if (!process.features.typescript) {
  process.stderr.write(
    `error: the workspace's source is TypeScript, which Node.js 24 runs as it is (pnpm pins Node 24 for the workspace's scripts); this Node.js ${process.version} cannot. Run: pnpm svc <command> (or pnpm exec svc)\n`,
  );
  process.exit(1);
}
if (process.env.NODE_COMPILE_CACHE === undefined && process.env.NODE_DISABLE_COMPILE_CACHE === undefined) module.enableCompileCache?.();
await import('../src/bin.ts');
