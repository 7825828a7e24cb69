import { mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { runCli } from './helpers/run-cli.ts';

/** Errors say what a CLI user can act on: the system's reason, a typo as a usage error, how to sign in. */
let svc: TestServer;
let config: string;
test.before(async () => {
  svc = await startTestServer();
  // No stored session: the CLI's config folder is empty.
  config = await mkdtemp(path.join(tmpdir(), 'svc-cli-config-'));
});
test.after.always(async () => {
  await svc?.close();
});

/** A loopback port nothing listens on: taken, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test('a refused connection names its reason, not `fetch failed`', async (t) => {
  const port = await closedPort();
  const run = await runCli(['health', '--base-url', `http://127.0.0.1:${port}`]);
  t.is(run.code, 1, run.stderr);
  t.regex(run.stderr, new RegExp(`Cannot reach http://127\\.0\\.0\\.1:${port}/healthz: connection refused \\(ECONNREFUSED\\)`));
  t.notRegex(run.stderr, /fetch failed/);
  const json = await runCli(['health', '--base-url', `http://127.0.0.1:${port}`, '--json']);
  t.like(JSON.parse(json.stderr), { code: 'connection_error' });
  t.regex(JSON.parse(json.stderr).error, /ECONNREFUSED/);
});

test("a port fetch refuses to call names undici's reason, not the wrapper's (`Request failed due to a network error`)", async (t) => {
  // Port 9 is on the fetch standard's list of bad ports: undici refuses it with `bad port` and no system code.
  const run = await runCli(['board', 'get', 'general', '--base-url', 'http://127.0.0.1:9']);
  t.is(run.code, 1, run.stderr);
  t.regex(run.stderr, /Cannot reach http:\/\/127\.0\.0\.1:9\/api\/v1\/blackboard\/get: bad port/);
  t.notRegex(run.stderr, /Request failed due to a network error/);
});

test('a server URL that is not an http(s) URL is a usage error (exit 2), from the flag or the environment', async (t) => {
  const flag = await runCli(['health', '--base-url', 'notaurl']);
  t.is(flag.code, 2, flag.stderr);
  t.regex(flag.stderr, /--base-url \(or SVC_BASE_URL\) must be an http or https URL such as http:\/\/127\.0\.0\.1:8787, not "notaurl"/);
  const variable = await runCli(['board', 'get', 'x:y'], { env: { SVC_API_URL: 'ftp://example' } });
  t.is(variable.code, 2, variable.stderr);
  t.regex(variable.stderr, /--api-url \(or SVC_API_URL\) must be an http or https URL/);
});

test('a call that needs a credential, made with none, says how a CLI user sends one', async (t) => {
  const run = await runCli(['keys', 'list'], { env: { SVC_BASE_URL: svc.baseUrl, XDG_CONFIG_HOME: config } });
  t.is(run.code, 1, run.stderr);
  t.regex(run.stderr, /\(unauthorized, request req_\w+\): sign in with `svc login`, or pass a developer key or token with --token or SVC_TOKEN/);
  t.notRegex(run.stderr, /Authorization: Bearer/);
});
