import type { DeveloperCredentialSecretResponse, Scope } from '@svc/schemas';
import type { OAuthSession, SvcClient } from '@svc/client';
import type { TestServer } from './test-server.ts';

/** A fresh OAuth agent (public client, code + PKCE) and a client acting as it. */
export async function signInAgent(svc: TestServer, scope?: string): Promise<{ session: OAuthSession & { clientId: string }; client: SvcClient; id: string }> {
  const session = await svc.client().oauth.login({ clientName: 'test agent', scope });
  const client = svc.client({ token: session.accessToken });
  const me = await client.oauth.whoami();
  return { session, client, id: me.id };
}

export async function createKey(agent: SvcClient, scopes: Scope[], name = 'test key'): Promise<DeveloperCredentialSecretResponse> {
  return agent.developerKeys.create({ body: { name, scopes } });
}
