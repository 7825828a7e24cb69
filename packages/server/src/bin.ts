#!/usr/bin/env node
/**
 * The `svc-server` command (from the workspace, reached through bin/svc-server.js, which turns the
 * compile cache on first so that this file is not stripped again). Before the server's modules load, the process makes sure it runs
 * with the server's V8 settings and Node's compile cache (launch.ts), which only its command line
 * and environment can give: it replaces itself with the same command plus those (`process.execve`:
 * the same pid, so a supervisor, a terminal or a container sees one process throughout). Not
 * where that is not available (Windows), nor when a parent talks to it over an IPC channel (pm2,
 * `fork()`), which does not survive the replacement: there it runs with V8's defaults and turns
 * the compile cache on for the modules still to load.
 */
import module from 'node:module';
import { relaunch } from './launch.ts';
import { freshStartBundle } from './start-bundle.ts';

const again = relaunch(process.execArgv, process.argv.slice(1), process.env);
if (again && typeof process.execve === 'function' && process.platform !== 'win32' && !process.channel) {
  // Node writes its compile cache at exit, which execve skips: keep what this process compiled
  // (bin.ts and its imports, stripped, when bin/svc-server.js turned the cache on) for the next start.
  module.flushCompileCache?.();
  process.execve(process.execPath, [process.execPath, ...again.args], again.env);
}
module.enableCompileCache?.();
// From the workspace (this file as TypeScript), the start bundle when it is up to date with the
// sources (start-bundle.ts); a published package runs its own build, which this file is part of.
// Two import() calls with their own argument each: a bundler follows only a literal one.
const bundle = import.meta.url.endsWith('.ts') ? freshStartBundle() : undefined;
await (bundle ? import(bundle.href) : import('./cli.ts'));
