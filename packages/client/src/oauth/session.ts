import type { OAuthTokenResponse } from '@svc/schemas';

/** What a signed-in caller holds. `expiresAt` is epoch milliseconds. */
export interface OAuthSession {
  accessToken: string;
  refreshToken?: string;
  /** The signed client id the tokens were issued to (public clients may omit it when refreshing). */
  clientId?: string;
  expiresAt?: number;
  scope?: string;
}

export function sessionFromTokens(tokens: OAuthTokenResponse, clientId: string | undefined, now = Date.now()): OAuthSession {
  return {
    accessToken: tokens.access_token,
    ...(tokens.refresh_token ? { refreshToken: tokens.refresh_token } : {}),
    ...(clientId ? { clientId } : {}),
    expiresAt: now + tokens.expires_in * 1000,
    scope: tokens.scope,
  };
}
