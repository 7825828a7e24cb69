import { mkdtemp, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { runCli } from './helpers/run-cli.ts';

/** `svc config` and profiles (as gh's and stripe's): flag > environment > profile > default. */
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer();
});
test.after.always(async () => {
  await svc?.close();
});

const freshConfig = async () => ({ XDG_CONFIG_HOME: await mkdtemp(path.join(tmpdir(), 'svc-cli-config-')) });
// Nothing listens on the discard port: a request sent there fails, so a status naming svc.baseUrl proves which URL won.
const DEAD_URL = 'http://127.0.0.1:9';

type Status = { server: string; source: string; signed_in: boolean; credential: string };
async function authStatus(args: string[], env: Record<string, string>): Promise<Status> {
  const run = await runCli([...args, 'auth', 'status', '--json'], { env });
  return JSON.parse(run.stdout) as Status;
}

test('config set, get, list and unset keep settings per profile in a 0600 file; a token is never listed', async (t) => {
  const env = await freshConfig();
  const empty = await runCli(['config', 'list'], { env });
  t.is(empty.code, 0, empty.stderr);
  t.regex(empty.stdout, /no profiles yet/);

  const set = await runCli(['config', 'set', 'base_url', svc.baseUrl, '--json'], { env });
  t.is(set.code, 0, set.stderr);
  const { file, profile } = JSON.parse(set.stdout) as { file: string; profile: string };
  t.is(profile, 'default');
  t.is(file, path.join(env.XDG_CONFIG_HOME, 'svc', 'config.json'));
  t.is((await stat(file)).mode & 0o777, 0o600);
  t.is((await stat(path.dirname(file))).mode & 0o777, 0o700);

  t.is((await runCli(['--profile', 'staging', 'config', 'set', 'token', 'svc_sk_secret_value'], { env })).code, 0);
  t.is((await runCli(['config', 'set', 'api_url', DEAD_URL], { env: { ...env, SVC_PROFILE: 'staging' } })).code, 0);

  const get = await runCli(['config', 'get', 'base_url'], { env });
  t.is(get.stdout, `${svc.baseUrl}\n`);
  t.is((await runCli(['--profile', 'staging', 'config', 'get', 'token'], { env })).stdout, 'svc_sk_secret_value\n');

  const list = await runCli(['--profile', 'staging', 'config', 'list'], { env });
  t.is(list.code, 0, list.stderr);
  t.false(list.stdout.includes('svc_sk_secret_value'));
  t.regex(list.stdout, /^ {2}default +http:\/\/127\.0\.0\.1:\d+ +- +-$/m);
  t.regex(list.stdout, /^\* staging +- +http:\/\/127\.0\.0\.1:9 +\(set\)$/m);
  const listJson = await runCli(['config', 'ls', '--json'], { env });
  t.false(listJson.stdout.includes('svc_sk_secret_value'));
  t.deepEqual((JSON.parse(listJson.stdout) as { profiles: unknown[] }).profiles, [
    { name: 'default', active: true, base_url: svc.baseUrl },
    { name: 'staging', active: false, token: '(set)', api_url: DEAD_URL },
  ]);

  t.is((await runCli(['--profile', 'staging', 'config', 'unset', 'token'], { env })).code, 0);
  const gone = await runCli(['--profile', 'staging', 'config', 'get', 'token'], { env });
  t.is(gone.code, 1);
  t.regex(gone.stderr, /token is not set in profile staging/);
});

test('a flag wins over its variable, which wins over the profile, which wins over the default', async (t) => {
  const env = await freshConfig();
  t.is((await runCli(['--profile', 'staging', 'config', 'set', 'base_url', svc.baseUrl], { env })).code, 0);
  t.is((await runCli(['--profile', 'staging', 'config', 'set', 'token', svc.operatorToken], { env })).code, 0);
  t.is((await runCli(['--profile', 'dead', 'config', 'set', 'base_url', DEAD_URL], { env })).code, 0);

  // The profile alone, chosen by flag or by SVC_PROFILE.
  t.like(await authStatus(['--profile', 'staging'], env), { server: svc.baseUrl, source: 'profile staging', signed_in: true, credential: 'operator_token' });
  t.like(await authStatus([], { ...env, SVC_PROFILE: 'staging' }), { server: svc.baseUrl, source: 'profile staging', signed_in: true });
  // --profile wins over SVC_PROFILE.
  t.like(await authStatus(['--profile', 'staging'], { ...env, SVC_PROFILE: 'dead' }), { server: svc.baseUrl, signed_in: true });
  // The variable wins over the profile: SVC_TOKEN's bad token is sent, SVC_BASE_URL's server is asked.
  t.like(await authStatus(['--profile', 'staging'], { ...env, SVC_TOKEN: 'svc_sk_not_a_real_key' }), {
    source: '--token or SVC_TOKEN',
    credential: 'refused',
  });
  t.like(await authStatus(['--profile', 'dead'], { ...env, SVC_BASE_URL: svc.baseUrl }), { server: svc.baseUrl, source: 'none', credential: 'none' });
  // The flag wins over the variable.
  t.like(await authStatus(['--profile', 'staging', '--token', svc.operatorToken], { ...env, SVC_TOKEN: 'svc_sk_not_a_real_key' }), { signed_in: true });
  t.like(await authStatus(['--profile', 'dead', '--base-url', svc.baseUrl], { ...env, SVC_BASE_URL: DEAD_URL }), { server: svc.baseUrl });
  // No default profile, no flag, no variable: the built-in default URL.
  const fallback = await runCli(['auth', 'status', '--json'], { env, timeoutMs: 30_000 });
  t.false(fallback.stdout.includes(svc.baseUrl));
  t.regex(fallback.stderr, /127\.0\.0\.1:8787|localhost:8787/);
  // `svc login` refuses while a profile's token is set, and says where it came from.
  const login = await runCli(['--profile', 'staging', 'login'], { env });
  t.is(login.code, 1);
  t.regex(login.stderr, /a token is set \(profile staging\)/);
});

test('an unknown setting, a bad URL, a bad profile name or a profile that does not exist is a usage error (exit 2)', async (t) => {
  const env = await freshConfig();
  const unknown = await runCli(['config', 'set', 'colour', 'blue'], { env });
  t.is(unknown.code, 2);
  t.regex(unknown.stderr, /unknown setting "colour"; the settings are base_url, api_url, token/);
  const badUrl = await runCli(['config', 'set', 'base_url', 'notaurl'], { env });
  t.is(badUrl.code, 2);
  t.regex(badUrl.stderr, /base_url must be an http or https URL/);
  const badName = await runCli(['--profile', '__proto__', 'config', 'set', 'base_url', svc.baseUrl], { env });
  t.is(badName.code, 2);
  t.regex(badName.stderr, /a profile name is 1 to 64 letters/);
  t.is((await runCli(['--profile', 'a'.repeat(64), 'config', 'set', 'base_url', svc.baseUrl], { env })).code, 0, '64 characters pass');
  t.is((await runCli(['--profile', 'a'.repeat(65), 'config', 'set', 'base_url', svc.baseUrl], { env })).code, 2, '65 do not');
  // A typo in a profile's name never falls back to the default server.
  const typo = await runCli(['--profile', 'stagin', 'health'], { env: { ...env } });
  t.is(typo.code, 2);
  t.regex(typo.stderr, /no profile "stagin"; create it with `svc config set --profile stagin base_url <url>`/);
});
