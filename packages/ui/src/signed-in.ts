import { createClient, type SvcClient } from '@svc/client';
import { surfacesOnce } from './api.ts';
import { session } from './session.ts';

/**
 * The whole typed client (every feature and its helpers), for the signed-in pages only: they
 * load it on demand, so the board's first load never carries it. An OAuth session is handed to
 * the client, which renews it by refresh rotation (one refresh at a time, since a rotated
 * refresh token works once) and tells us the new tokens, kept in this tab's session only.
 */
export async function signedInClient(): Promise<SvcClient> {
  const { baseUrl, apiUrl } = await surfacesOnce();
  const urls = { baseUrl, apiUrl };
  const current = session.value;
  if (!current) throw new Error('Sign in first.');
  if (current.kind === 'operator' || current.kind === 'key') return clientWithToken(current.accessToken);
  const oauthSession = { ...current };
  return createClient({
    ...urls,
    retry: 1,
    session: oauthSession,
    onSessionRefreshed: (renewed) => {
      session.value = { kind: 'oauth', ...renewed };
    },
  });
}

/** A client with no credential, for the OAuth endpoints themselves. */
export async function publicClient(): Promise<SvcClient> {
  const { baseUrl, apiUrl } = await surfacesOnce();
  return createClient({ baseUrl, apiUrl, retry: 1, token: undefined });
}

/** A client that sends this bearer token: the operator's session, or a pasted token being checked before it becomes one. */
export async function clientWithToken(token: string): Promise<SvcClient> {
  const { baseUrl, apiUrl } = await surfacesOnce();
  return createClient({ baseUrl, apiUrl, retry: 1, token });
}
