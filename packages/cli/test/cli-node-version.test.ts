import test from 'ava';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { OLDEST_NODE_MAJOR, unsupportedNode } from '../src/node-version.ts';

// The bin checks this before loading its modules; the release lane runs the packed bin on an older Node.
test('a Node.js older than 22 is refused with a message naming both versions; 22 and newer run', (t) => {
  t.is(OLDEST_NODE_MAJOR, 22);
  t.is(
    unsupportedNode('20.20.2'),
    'svc needs Node.js 22 or newer; this is Node.js v20.20.2. Install a current Node.js (https://nodejs.org) and run svc again.',
  );
  t.regex(unsupportedNode('21.7.3') ?? '', /needs Node\.js 22 or newer; this is Node\.js v21\.7\.3/);
  for (const version of ['22.0.0', '22.22.2', '24.21.0', '26.1.0']) t.is(unsupportedNode(version), undefined, version);
  t.truthy(unsupportedNode('not-a-version'));
});

// The workspace's launchers (`pnpm svc`, `pnpm start`) load TypeScript source: a Node.js that
// cannot strip types (a system Node 20 run directly; here Node 24 with stripping turned off) gets
// one line saying what to run, not ERR_UNKNOWN_FILE_EXTENSION and a stack.
test('the workspace launchers refuse a Node.js that cannot run TypeScript with one line naming the command to run', (t) => {
  const launchers = [
    [fileURLToPath(new URL('../bin/svc.js', import.meta.url)), 'pnpm svc <command>'],
    [fileURLToPath(new URL('../../server/bin/svc-server.js', import.meta.url)), 'pnpm start'],
  ] as const;
  for (const [launcher, command] of launchers) {
    const run = spawnSync(process.execPath, ['--no-experimental-strip-types', launcher, '--version'], { encoding: 'utf8' });
    t.is(run.status, 1, launcher);
    t.is(run.stdout, '');
    t.regex(run.stderr, /^error: the workspace's source is TypeScript, which Node\.js 24 runs as it is .*; this Node\.js v\d+\.\d+\.\d+ cannot\. Run: /);
    t.true(run.stderr.includes(command));
    t.is(run.stderr.trim().split('\n').length, 1);
  }
});
