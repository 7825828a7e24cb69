import { mkdtemp, rm, stat, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { runCli } from './helpers/run-cli.ts';

/** `svc login|logout|whoami` and `svc keys ...` as a process, with a private XDG_CONFIG_HOME. */
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer();
});
test.after.always(async () => {
  await svc?.close();
});

async function configHome(t: { teardown(fn: () => Promise<void>): void }): Promise<Record<string, string>> {
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-cli-config-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return { XDG_CONFIG_HOME: dir, SVC_BASE_URL: svc.baseUrl };
}

test('login stores tokens with mode 0600, whoami uses them, logout forgets them', async (t) => {
  const env = await configHome(t);
  const login = await runCli(['login', '--json'], { env });
  t.is(login.code, 0, login.stderr);
  const signedIn = JSON.parse(login.stdout) as { agent: string; stored_in: string };
  t.regex(signedIn.agent, /^agt_/);
  t.is(signedIn.stored_in, path.join(env.XDG_CONFIG_HOME!, 'svc', 'credentials.json'));
  t.is((await stat(signedIn.stored_in)).mode & 0o777, 0o600);
  t.is((await stat(path.dirname(signedIn.stored_in))).mode & 0o777, 0o700);

  const whoami = await runCli(['whoami'], { env });
  t.is(whoami.code, 0, whoami.stderr);
  t.true(whoami.stdout.startsWith(`agent ${signedIn.agent}`));
  t.regex(whoami.stdout, /credential: oauth_access_token/);

  const again = await runCli(['login'], { env });
  t.is(again.code, 1);
  t.regex(again.stderr, /already signed in/);

  const stored = JSON.parse(await readFile(signedIn.stored_in, 'utf8')).servers[svc.baseUrl] as { accessToken: string; refreshToken: string };
  const logout = await runCli(['logout', '--json'], { env });
  t.is(logout.code, 0, logout.stderr);
  t.deepEqual(JSON.parse(logout.stdout), { server: svc.baseUrl, signed_out: true, revoked: true });
  // Revoked on the server (RFC 7009), not only forgotten here: the old tokens are refused.
  t.is((await fetch(`${svc.baseUrl}/v1/whoami`, { headers: { authorization: `Bearer ${stored.accessToken}` } })).status, 401);
  await t.throwsAsync(svc.client().oauth.refresh({ refreshToken: stored.refreshToken }));
  const anonymous = await runCli(['whoami'], { env });
  t.is(anonymous.code, 1);
  t.regex(anonymous.stderr, /unauthorized|401/);
});

test('logout against a server it cannot reach keeps the session and says so; --local forgets it', async (t) => {
  const env = await configHome(t);
  t.is((await runCli(['login'], { env })).code, 0);
  const file = path.join(env.XDG_CONFIG_HOME!, 'svc', 'credentials.json');
  const stored = JSON.parse(await readFile(file, 'utf8'));
  // The same session, filed under a server address nothing listens on.
  const { writeFile } = await import('node:fs/promises');
  const gone = 'http://127.0.0.1:9';
  await writeFile(file, JSON.stringify({ ...stored, servers: { [gone]: stored.servers[svc.baseUrl] } }), { mode: 0o600 });
  const refused = await runCli(['logout'], { env: { ...env, SVC_BASE_URL: gone } });
  t.is(refused.code, 1);
  t.regex(refused.stderr, /could not revoke the session.*stored tokens are kept.*svc logout --local/);
  t.truthy(JSON.parse(await readFile(file, 'utf8')).servers[gone]);
  const local = await runCli(['logout', '--local'], { env: { ...env, SVC_BASE_URL: gone } });
  t.is(local.code, 0, local.stderr);
  t.regex(local.stdout, /tokens forgotten here, not revoked/);
});

test('an expired stored access token is refreshed once and written back', async (t) => {
  const env = await configHome(t);
  t.is((await runCli(['login'], { env })).code, 0);
  const file = path.join(env.XDG_CONFIG_HOME!, 'svc', 'credentials.json');
  const before = JSON.parse(await readFile(file, 'utf8')) as { servers: Record<string, { accessToken: string; refreshToken: string; expiresAt: number }> };
  const stored = before.servers[svc.baseUrl]!;
  // A token the server refuses (as if expired), with an expiry still in the future: only the 401 path can save it.
  const { writeFile } = await import('node:fs/promises');
  await writeFile(file, JSON.stringify({ ...before, servers: { [svc.baseUrl]: { ...stored, accessToken: `${stored.accessToken}x` } } }), { mode: 0o600 });
  const whoami = await runCli(['whoami', '--json'], { env });
  t.is(whoami.code, 0, whoami.stderr);
  const after = JSON.parse(await readFile(file, 'utf8')) as typeof before;
  t.not(after.servers[svc.baseUrl]!.refreshToken, stored.refreshToken, 'the rotated refresh token was saved');
  t.is((await stat(file)).mode & 0o777, 0o600);
  t.is((await runCli(['whoami'], { env })).code, 0, 'the saved tokens work on the next run');

  // Reusing the old refresh token revokes the family: the stored session dies, the CLI says what to do.
  await svc
    .client()
    .oauth.refresh({ refreshToken: stored.refreshToken })
    .catch(() => undefined);
  const dead = await runCli(['whoami'], { env });
  t.is(dead.code, 1);
  t.regex(dead.stderr, /no longer valid; run `svc logout` and `svc login`/);
});

test('keys create prints the secret once; list, rotate, revoke and receipts never print it', async (t) => {
  const env = await configHome(t);
  t.is((await runCli(['login'], { env })).code, 0);
  const created = await runCli(['keys', 'create', '--name', 'ci', '--scope', 'models:read,jobs:read'], { env });
  t.is(created.code, 0, created.stderr);
  const secret = /svc_dk_\S+/.exec(created.stdout)![0];
  const credentialId = /dk_[0-9A-Za-z]{22}/.exec(created.stdout)![0];
  t.regex(created.stderr, /shown once/);

  const withKey = await runCli(['whoami', '--json', '--token', secret], { env });
  t.is(withKey.code, 0, withKey.stderr);
  t.deepEqual(JSON.parse(withKey.stdout).scopes, ['models:read', 'jobs:read']);

  const list = await runCli(['keys', 'list'], { env });
  t.is(list.code, 0, list.stderr);
  t.true(list.stdout.includes(credentialId));
  t.false(list.stdout.includes(secret));

  const rotated = await runCli(['keys', 'rotate', credentialId, '--json'], { env });
  t.is(rotated.code, 0, rotated.stderr);
  const newSecret = (JSON.parse(rotated.stdout) as { secret: string }).secret;
  t.not(newSecret, secret);
  t.is((await runCli(['whoami', '--token', secret], { env })).code, 1, 'the rotated key is dead');

  const newId = /dk_[0-9A-Za-z]{22}/.exec(newSecret.replace('svc_dk_', 'dk_'))![0];
  const revoked = await runCli(['keys', 'revoke', newId], { env });
  t.is(revoked.code, 0, revoked.stderr);
  t.regex(revoked.stdout, /revoked at/);
  const receipts = await runCli(['keys', 'receipts', credentialId], { env });
  t.is(receipts.code, 0, receipts.stderr);
  t.regex(receipts.stdout, /created[\s\S]*rotated/);
  for (const output of [list.stdout, receipts.stdout, revoked.stdout]) t.false(output.includes(newSecret.slice(-38)) || output.includes(secret.slice(-38)));
});

test('keys usage errors exit 2; keys without a sign-in exit 1', async (t) => {
  const env = await configHome(t);
  t.is((await runCli(['keys', 'create', '--name', 'x', '--scope', 'root'], { env })).code, 2);
  t.is((await runCli(['keys', 'create', '--name', 'x'], { env })).code, 2);
  t.is((await runCli(['keys', 'list', '--limit', '101'], { env })).code, 2);
  const anonymous = await runCli(['keys', 'list'], { env });
  t.is(anonymous.code, 1);
});
