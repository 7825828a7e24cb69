import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { runCli } from './helpers/run-cli.ts';

/** `svc login --with-token` (a developer key from stdin, as gh's) and `svc auth status`. */
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer();
});
test.after.always(async () => {
  await svc?.close();
});

const freshConfig = async () => ({ SVC_BASE_URL: svc.baseUrl, XDG_CONFIG_HOME: await mkdtemp(path.join(tmpdir(), 'svc-cli-auth-')) });

/** A developer key of a new agent, made through the real OAuth flow and the keys route. */
async function developerKey(): Promise<string> {
  const env = await freshConfig();
  t_ok(await runCli(['login'], { env }));
  const created = await runCli(['keys', 'create', '--name', 'ci', '--scope', 'models:read', '--json'], { env });
  t_ok(created);
  return (JSON.parse(created.stdout) as { secret: string }).secret;
}
function t_ok(run: { code: number | null; stderr: string }) {
  if (run.code !== 0) throw new Error(`the CLI failed: ${run.stderr}`);
}

test('login --with-token stores a developer key read from stdin; auth status and whoami use it; logout forgets it without revoking', async (t) => {
  const key = await developerKey();
  const env = await freshConfig();
  const login = await runCli(['login', '--with-token', '--json'], { env, input: `${key}\n` });
  t.is(login.code, 0, login.stderr);
  const stored = JSON.parse(login.stdout) as { credential: string; scopes: string[]; stored_in: string };
  t.is(stored.credential, 'developer_key');
  t.deepEqual(stored.scopes, ['models:read']);
  t.is((await stat(stored.stored_in)).mode & 0o777, 0o600);
  t.false(login.stdout.includes(key), 'the key is never printed');

  const status = await runCli(['auth', 'status'], { env });
  t.is(status.code, 0, status.stderr);
  t.regex(
    status.stdout,
    /signed in as agent \S+\ncredential: developer_key, from a stored token \(svc login --with-token\) in .*credentials\.json\nscopes: models:read/,
  );
  t.regex((await runCli(['whoami'], { env })).stdout, /credential: developer_key/);

  const logout = await runCli(['logout'], { env });
  t.is(logout.code, 0, logout.stderr);
  t.regex(logout.stdout, /stays valid until `svc keys revoke`/);
  t.is((await fetch(`${svc.baseUrl}/v1/whoami`, { headers: { authorization: `Bearer ${key}` } })).status, 200, 'the key still works');
  await t.throwsAsync(readFile(stored.stored_in));
});

test('login --with-token refuses a token the server does not accept, and stores nothing', async (t) => {
  const env = await freshConfig();
  const bad = await runCli(['login', '--with-token'], { env, input: 'svc_sk_not_a_real_key\n' });
  t.is(bad.code, 1);
  t.regex(bad.stderr, /did not accept the token .*nothing was stored/);
  const empty = await runCli(['login', '--with-token'], { env, input: '' });
  t.is(empty.code, 2);
  t.regex(empty.stderr, /expects one token on standard input/);
  const status = await runCli(['auth', 'status', '--json'], { env });
  t.is(status.code, 1);
  t.like(JSON.parse(status.stdout), { signed_in: false, source: 'none', credential: 'none' });
  const refused = await runCli(['auth', 'status'], { env: { ...env, SVC_TOKEN: 'svc_sk_not_a_real_key' } });
  t.is(refused.code, 1);
  t.regex(refused.stdout, /the credential from --token or SVC_TOKEN is refused/);
});

test('auth status names --token or SVC_TOKEN as the source when one is given', async (t) => {
  const env = await freshConfig();
  const status = await runCli(['auth', 'status', '--json'], { env: { ...env, SVC_TOKEN: svc.operatorToken } });
  t.is(status.code, 0, status.stderr);
  t.like(JSON.parse(status.stdout), { signed_in: true, source: '--token or SVC_TOKEN', credential: 'operator_token' });
  const help = await runCli(['login', '--help']);
  t.regex(help.stdout, /Examples:\n\s+\$ svc login/);
});
