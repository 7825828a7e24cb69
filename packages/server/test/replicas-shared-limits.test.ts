import { setTimeout as sleep } from 'node:timers/promises';
import test from 'ava';
import { createPkcePair } from '@svc/client';
import { freePort } from '@svc/testing/free-port';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';
import { startServerProcess, type ServerProcess } from '@svc/testing/server-process';

/**
 * Two server processes on one PostgreSQL, hit at once: every shared limit is exact and every
 * single-use thing is used once, whichever replica each request reaches. The embedded database
 * cannot be shared by two processes, so there both "replicas" are the one process (the checks
 * still run under the same concurrency).
 */
const LIMIT = 5;
const CHANNEL_POSTS = 3;
const REDIRECT = 'http://127.0.0.1:53682/callback';
let database: TestDatabase;
const replicas: ServerProcess[] = [];
let urls: [string, string] = ['', ''];

test.before(async () => {
  database = await createTestDatabase();
  const portA = await freePort();
  const env = {
    SVC_SIGNING_SECRET: 'replica-limits-secret-0123456789-abcdefghij',
    // Replicas behind one load balancer share the public URL (the OAuth issuer).
    SVC_PUBLIC_URL: `http://127.0.0.1:${portA}`,
    SVC_TRUST_PROXY: 'true',
    SVC_CATALOG_DEMO: 'on',
    SVC_OAUTH_TOKEN_RATE_PER_MINUTE: String(LIMIT),
    SVC_OAUTH_REGISTER_RATE_PER_MINUTE: String(LIMIT),
    SVC_BLACKBOARD_CHANNEL_POSTS_PER_HOUR: String(CHANNEL_POSTS),
  };
  replicas.push(await startServerProcess(database, { ...env, SVC_PORT: String(portA) }));
  if (database.kind === 'postgres') replicas.push(await startServerProcess(database, { ...env, SVC_PORT: String(await freePort()) }));
  urls = [replicas[0]!.baseUrl, (replicas[1] ?? replicas[0]!).baseUrl];
});
test.after.always(async () => {
  for (const replica of replicas) replica.child.kill('SIGTERM');
  await Promise.all(replicas.map((replica) => replica.exited));
  await database?.drop();
});

/** Waits out the end of a minute window so a burst is counted in one window. */
async function inOneMinuteWindow(): Promise<void> {
  const into = Date.now() % 60_000;
  if (into > 50_000) await sleep(60_000 - into + 100);
}

const both = <T>(count: number, call: (url: string, index: number) => Promise<T>) =>
  Promise.all(Array.from({ length: count }, (_, index) => call(urls[index % 2]!, index)));

test.serial('the per-IP token limit is exact across replicas under a concurrent burst', async (t) => {
  await inOneMinuteWindow();
  const statuses = await both(LIMIT * 3, (url) =>
    fetch(`${url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': '203.0.113.150' },
      body: 'grant_type=client_credentials',
    }).then((response) => response.status),
  );
  t.is(statuses.filter((status) => status !== 429).length, LIMIT, statuses.join(' '));
});

test.serial('the per-IP registration limit is exact across replicas under a concurrent burst', async (t) => {
  await inOneMinuteWindow();
  const statuses = await both(LIMIT * 3, (url) =>
    fetch(`${url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.151' },
      body: JSON.stringify({ redirect_uris: [REDIRECT] }),
    }).then((response) => response.status),
  );
  t.is(statuses.filter((status) => status === 201).length, LIMIT, statuses.join(' '));
  t.is(statuses.filter((status) => status === 429).length, LIMIT * 2);
});

test.serial('an authorization code is redeemed once, whichever replicas race for it', async (t) => {
  const registration = (await (
    await fetch(`${urls[1]}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [REDIRECT] }),
    })
  ).json()) as { client_id: string };
  const pkce = await createPkcePair();
  const authorize = new URL(`${urls[0]}/oauth/authorize`);
  for (const [name, value] of Object.entries({
    client_id: registration.client_id,
    redirect_uri: REDIRECT,
    response_type: 'code',
    code_challenge: pkce.challenge,
    code_challenge_method: 'S256',
  }))
    authorize.searchParams.set(name, value);
  const code = new URL((await fetch(authorize, { redirect: 'manual' })).headers.get('location')!).searchParams.get('code')!;
  const form = new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: pkce.verifier, redirect_uri: REDIRECT });
  const statuses = await both(8, (url, index) =>
    fetch(`${url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': `198.51.100.${index + 10}` },
      body: form,
    }).then((response) => response.status),
  );
  t.is(statuses.filter((status) => status === 200).length, 1, statuses.join(' '));
});

test.serial('blackboard admission: a channel cap is exact across replicas under a concurrent burst', async (t) => {
  const statuses = await both(CHANNEL_POSTS * 4, (url, index) =>
    fetch(`${url}/api/v1/blackboard/put`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: 'replicas:race', value: { text: `post ${index}` } }),
    }).then((response) => response.status),
  );
  t.is(statuses.filter((status) => status < 300).length, CHANNEL_POSTS, statuses.join(' '));
  t.true(statuses.every((status) => status < 300 || status === 429));
});

test.serial('a download completion counts once when its retries race across replicas', async (t) => {
  const artifact = 'support-tickets-sample';
  const plan = (await (await fetch(`${urls[0]}/api/artifacts/${artifact}/download-plan`)).json()) as {
    files: Array<{ path: string; sha256: string; sizeBytes: number }>;
  };
  const file = plan.files.find((entry) => entry.path === 'tickets.csv')!;
  const downloads = async () => ((await (await fetch(`${urls[1]}/api/artifacts/${artifact}`)).json()) as { downloads: number }).downloads;
  const before = await downloads();
  const start = await fetch(`${urls[0]}/api/downloads/${artifact}/tickets.csv`, {
    redirect: 'manual',
    headers: { authorization: 'Bearer replica-race-caller' },
  });
  const token = start.headers.get('x-svc-completion-token')!;
  const answers = await both(8, (url) =>
    fetch(`${url}/api/download-completions/${artifact}/tickets.csv`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sha256: file.sha256, sizeBytes: file.sizeBytes, completionToken: token }),
    }).then(async (response) => ({
      status: response.status,
      body: (await response.json()) as { status: string; recordedAt: string },
    })),
  );
  t.true(answers.every((answer) => answer.status === 200));
  t.is(answers.filter((answer) => answer.body.status === 'client-attested').length, 1);
  t.is(new Set(answers.map((answer) => answer.body.recordedAt)).size, 1, 'every answer names the one record');
  t.is(await downloads(), before + 1);
});
