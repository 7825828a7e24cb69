/** A PKCE pair (RFC 7636): keep the verifier, send the S256 challenge. */
export interface PkcePair {
  verifier: string;
  challenge: string;
  method: 'S256';
}

const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/(?<!=)=+$/, '');

/**
 * A fresh code verifier (32 random bytes, 43 characters) and its S256 challenge.
 *
 * @example
 * ```ts
 * const pkce = await createPkcePair();
 * const url = svc.oauth.authorizeUrl({ clientId, redirectUri, codeChallenge: pkce.challenge });
 * ```
 */
export async function createPkcePair(): Promise<PkcePair> {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  return { verifier, challenge: await pkceChallenge(verifier), method: 'S256' };
}

/** The S256 challenge of a verifier: base64url(SHA-256(verifier)). */
export async function pkceChallenge(verifier: string): Promise<string> {
  return base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
}
