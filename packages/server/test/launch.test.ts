import { readFileSync } from 'node:fs';
import test from 'ava';
import { COMPILE_CACHE_DIRECTORY, EMBEDDED_MALLOC_ARENAS, EMBEDDED_V8_FLAGS, relaunch } from '../src/launch.ts';
import { createTestDatabase } from '@svc/testing/test-database';
import { killAllServerProcesses, startServerProcess } from '@svc/testing/server-process';

test.after.always(() => killAllServerProcesses());

const script = ['/srv/bin.ts', 'start'];

test('a plain start on the embedded database is re-run with the V8 flags first and the compile cache', (t) => {
  const again = relaunch(['--import', 'x.ts'], script, { PATH: '/bin' });
  t.deepEqual(again?.args, [...EMBEDDED_V8_FLAGS, '--import', 'x.ts', ...script]);
  t.deepEqual(again?.env, { PATH: '/bin', NODE_COMPILE_CACHE: COMPILE_CACHE_DIRECTORY, MALLOC_ARENA_MAX: EMBEDDED_MALLOC_ARENAS });
});

test('a start that has them all is not re-run', (t) => {
  t.is(relaunch([...EMBEDDED_V8_FLAGS], script, { NODE_COMPILE_CACHE: '/somewhere', MALLOC_ARENA_MAX: '4' }), undefined);
});

test('on PostgreSQL V8 and the allocator keep their own sizing: only the compile cache is added', (t) => {
  const again = relaunch([], script, { DATABASE_URL: 'postgres://db/svc' });
  t.deepEqual(again?.args, script);
  t.deepEqual(again?.env, { DATABASE_URL: 'postgres://db/svc', NODE_COMPILE_CACHE: COMPILE_CACHE_DIRECTORY });
  t.is(relaunch([], script, { DATABASE_URL: 'postgres://db/svc', NODE_COMPILE_CACHE: '/c' }), undefined);
});

test("the user's own settings win: the same flag with another value, in NODE_OPTIONS or with underscores, and a disabled cache", (t) => {
  t.is(relaunch(['--max-semi-space-size=64'], script, { NODE_COMPILE_CACHE: '/c', MALLOC_ARENA_MAX: '8' }), undefined);
  t.is(relaunch([], script, { NODE_OPTIONS: '--max_semi_space_size=4', NODE_DISABLE_COMPILE_CACHE: '1', MALLOC_ARENA_MAX: '8' }), undefined);
  const cacheOnly = relaunch([], script, { NODE_OPTIONS: '--max-semi-space-size=4' });
  t.deepEqual(cacheOnly?.args, script);
  t.is(cacheOnly?.env.NODE_COMPILE_CACHE, COMPILE_CACHE_DIRECTORY);
});

test('svc-server start on the embedded database runs as one process with the flags (same pid after the re-run) and serves', async (t) => {
  const database = await createTestDatabase({ adminUrl: undefined });
  const server = await startServerProcess(database);
  try {
    const commandLine = readFileSync(`/proc/${server.child.pid}/cmdline`, 'utf8').split('\0');
    for (const flag of EMBEDDED_V8_FLAGS) t.true(commandLine.includes(flag), commandLine.join(' '));
    const environment = readFileSync(`/proc/${server.child.pid}/environ`, 'utf8').split('\0');
    t.true(environment.some((entry) => entry.startsWith('NODE_COMPILE_CACHE=')));
    t.true(environment.includes(`MALLOC_ARENA_MAX=${EMBEDDED_MALLOC_ARENAS}`));
    t.is((await fetch(`${server.baseUrl}/healthz`)).status, 200);
  } finally {
    await server.stop();
    await database.drop();
  }
});
