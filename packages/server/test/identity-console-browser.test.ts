import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * A sign-in to the web console is the person at this browser: the authorization endpoint names the
 * browser in an HttpOnly cookie when (and only when) the redirect is the console's own callback,
 * and the agent is derived from it. Every other client keeps a fresh agent per authorization,
 * even when the same browser (the same cookie) approves it. The browser journey is in
 * packages/ui/test/console-signed-in.test.ts; this is the rule at the HTTP level.
 */
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer();
});
test.after.always(async () => {
  await svc?.close();
});

const consoleCallback = () => `${svc.baseUrl}/ui/callback`;

/** One authorization code run as a browser would, carrying `cookie`; answers the agent and the Set-Cookie. */
async function signIn(redirectUri: string, cookie?: string): Promise<{ agent: string; setCookie: string | null }> {
  const oauth = svc.client().oauth;
  const { client_id: clientId } = await oauth.register({ body: { redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' } });
  const pkce = await oauth.createPkce();
  const authorize = await fetch(oauth.authorizeUrl({ clientId, redirectUri, codeChallenge: pkce.challenge, state: 's' }), {
    redirect: 'manual',
    headers: cookie ? { cookie } : {},
  });
  if (authorize.status !== 302) throw new Error(`authorize answered ${authorize.status}: ${await authorize.text()}`);
  const code = new URL(authorize.headers.get('location')!).searchParams.get('code')!;
  const tokens = await oauth.exchangeCode({ code, codeVerifier: pkce.verifier, redirectUri, clientId });
  const me = await svc.client({ token: tokens.accessToken }).oauth.whoami();
  return { agent: me.id, setCookie: authorize.headers.get('set-cookie') };
}

const cookieOf = (setCookie: string | null) => setCookie!.split(';')[0]!;

test('the console callback: a browser cookie is set, and every sign-in carrying it is the same agent', async (t) => {
  const first = await signIn(consoleCallback());
  t.regex(first.setCookie ?? '', /^svc_browser=[A-Za-z0-9_-]{43}; Path=\/oauth\/authorize; Max-Age=34560000; HttpOnly; SameSite=Lax$/);
  t.regex(first.agent, /^agt_[A-Za-z0-9_-]{22}$/);
  const cookie = cookieOf(first.setCookie);
  const again = await signIn(consoleCallback(), cookie);
  t.is(again.agent, first.agent);
  t.is(cookieOf(again.setCookie), cookie, 'the same id, its lifetime renewed');
  // The agent id is a MAC of the cookie, not the cookie.
  t.false(first.agent.includes(cookie.split('=')[1]!.slice(0, 22)));
  // No cookie, or one that is not an id this server would make: another browser, another agent.
  const other = await signIn(consoleCallback());
  t.not(other.agent, first.agent);
  const forged = await signIn(consoleCallback(), 'svc_browser=short');
  t.not(forged.agent, first.agent);
  t.not(cookieOf(forged.setCookie), 'svc_browser=short');
});

test("any other redirect: no cookie is set, and the console browser's cookie does not make the console's agent", async (t) => {
  const consoleSignIn = await signIn(consoleCallback());
  const cookie = cookieOf(consoleSignIn.setCookie);
  for (const redirectUri of ['http://127.0.0.1:53682/callback', `${svc.baseUrl}/ui/callback/other`, `${svc.baseUrl}/ui/callbac`]) {
    const first = await signIn(redirectUri, cookie);
    const second = await signIn(redirectUri, cookie);
    t.is(first.setCookie, null, redirectUri);
    t.not(first.agent, consoleSignIn.agent, redirectUri);
    t.not(first.agent, second.agent, `${redirectUri}: a fresh agent per authorization`);
  }
});
