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

if (process.env.NODE_COMPILE_CACHE === undefined && process.env.NODE_DISABLE_COMPILE_CACHE === undefined) module.enableCompileCache?.();
await import('../src/bin.ts');
