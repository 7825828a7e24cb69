import test from 'ava';
import type { OAuthSession } from '@svc/client';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/** The client's OAuth session: an expired or refused access token is refreshed once, one refresh at a time. */
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer();
});
test.after.always(async () => {
  await svc?.close();
});

test('a refused access token is refreshed once and the call retried; the new session is reported', async (t) => {
  const signedIn = await svc.client().oauth.login();
  const session: OAuthSession = { ...signedIn, accessToken: `${signedIn.accessToken}x` };
  const refreshed: OAuthSession[] = [];
  const client = svc.client({ session, onSessionRefreshed: (next) => void refreshed.push({ ...next }) });
  const me = await client.oauth.whoami();
  t.is(me.kind, 'agent');
  t.is(refreshed.length, 1);
  t.not(session.refreshToken, signedIn.refreshToken, 'the session object carries the rotated refresh token');
  t.is(session.accessToken, refreshed[0]!.accessToken);
});

test('parallel calls with a stale token share one refresh (a rotated refresh token works once)', async (t) => {
  const signedIn = await svc.client().oauth.login();
  const session: OAuthSession = { ...signedIn, accessToken: `${signedIn.accessToken}x` };
  let refreshes = 0;
  const client = svc.client({ session, onSessionRefreshed: () => void refreshes++ });
  const answers = await Promise.all([client.oauth.whoami(), client.oauth.whoami(), client.credentials.list()]);
  t.is(answers[0].id, answers[1].id);
  t.is(refreshes, 1);
  t.truthy(await client.oauth.whoami(), 'the family is intact: no reuse was detected');
});

test('an access token past its expiry is refreshed before the call', async (t) => {
  const signedIn = await svc.client().oauth.login();
  const session: OAuthSession = { ...signedIn, expiresAt: Date.now() - 1000 };
  let refreshes = 0;
  const client = svc.client({ session, onSessionRefreshed: () => void refreshes++ });
  await client.oauth.whoami();
  t.is(refreshes, 1);
  t.true(session.expiresAt! > Date.now());
});

test('a dead refresh token leaves the 401 to the caller, refreshing only once', async (t) => {
  const signedIn = await svc.client().oauth.login();
  const session: OAuthSession = { ...signedIn, accessToken: 'svc-not-a-token', refreshToken: 'forged' };
  const error = await t.throwsAsync(svc.client({ session }).oauth.whoami());
  t.is((error as { status?: number }).status, 401);
});

test('OAuth errors reach the caller with the RFC code and its description', async (t) => {
  const error = await t.throwsAsync(svc.client().oauth.refresh({ refreshToken: 'forged' }));
  t.is((error as { status?: number }).status, 400);
  t.is((error as { code?: string }).code, 'oauth_error:invalid_grant');
  t.is(error!.message, 'invalid_grant: The refresh token is not valid.');
});
