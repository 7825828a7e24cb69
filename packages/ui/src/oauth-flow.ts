import { parseAuthorizationRedirect, OAuthFlowError } from '@svc/client';
import { scopes } from '@svc/schemas';
import { BASE } from './links.ts';
import { session } from './session.ts';
import { surfacesOnce } from './api.ts';
import { publicClient } from './signed-in.ts';

/**
 * The console is an OAuth public client of its own server: authorization code with PKCE, run
 * in the browser. It registers for each sign-in (registration is stateless and cheap); the PKCE
 * verifier, state and client id live in sessionStorage for the one round trip; tokens never
 * touch a URL or localStorage. Each registration is new, yet the agent is the same for every
 * sign-in from this browser: the authorization endpoint names the browser in its own HttpOnly
 * cookie when the redirect is this console's callback.
 */
const PENDING_KEY = 'svc.console.oauth-pending';

export const callbackUri = () => `${location.origin}${BASE}callback`;

export async function startSignIn(): Promise<void> {
  const svc = await publicClient();
  const { client_id: clientId } = await svc.oauth.register({
    body: { redirect_uris: [callbackUri()], token_endpoint_auth_method: 'none', client_name: 'svc console' },
  });
  const pkce = await svc.oauth.createPkce();
  const state = crypto.randomUUID();
  sessionStorage.setItem(PENDING_KEY, JSON.stringify({ verifier: pkce.verifier, state, clientId }));
  location.assign(svc.oauth.authorizeUrl({ clientId, redirectUri: callbackUri(), codeChallenge: pkce.challenge, state, scope: scopes.join(' ') }));
}

/** Reads the code from the redirect, checks state and issuer, exchanges it, and clears the address. */
export async function finishSignIn(href: string): Promise<void> {
  const pending = sessionStorage.getItem(PENDING_KEY);
  sessionStorage.removeItem(PENDING_KEY);
  // The code is single-use and short-lived, but it still leaves the address bar and history at once.
  history.replaceState(null, '', `${BASE}callback`);
  if (!pending) throw new OAuthFlowError('invalid_state', 'no sign-in was started in this tab');
  const { verifier, state, clientId } = JSON.parse(pending) as { verifier: string; state: string; clientId: string };
  const result = parseAuthorizationRedirect(href);
  if (result.state !== state) throw new OAuthFlowError('invalid_state', 'the state in the redirect differs from the one sent');
  const svc = await publicClient();
  const { issuer } = await surfacesOnce();
  if (result.iss !== undefined && result.iss !== issuer) throw new OAuthFlowError('invalid_issuer', `the redirect names issuer ${result.iss}`);
  const tokens = await svc.oauth.exchangeCode({ code: result.code, codeVerifier: verifier, redirectUri: callbackUri(), clientId });
  session.value = { kind: 'oauth', ...tokens, clientId };
}

/** Revokes the session's refresh token (and so its access tokens) on the server, then forgets it here. */
export async function signOut(): Promise<void> {
  const current = session.value;
  session.value = undefined;
  if (current?.kind !== 'oauth') return;
  await (await publicClient()).oauth.logout(current).catch(() => undefined);
}
