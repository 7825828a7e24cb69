import CachePolicy from 'http-cache-semantics';
import { clientMetadataDocumentLimits as limits, OAuthClientMetadataDocument } from '@svc/schemas';
import { fetchPublicHttpsResponse, type SourceFetchSeam } from '../../outbound/source-fetch.ts';
import { ServiceError } from '../../service-error.ts';
import { DEMO_TIER_SCOPES, OAuthFailure, redirectUriProblem, scopesFrom } from './oauth-rules.ts';
import type { ClientRegistration } from './oauth-tokens.ts';

const refused = (clientId: string, why: string) => new OAuthFailure('invalid_client', `The client_id ${JSON.stringify(clientId.slice(0, 300))} ${why}`);

/**
 * The rules a client_id URL must meet before anything is fetched: https, a path, no credentials,
 * no fragment, and written the way the document's own client_id must repeat it (no dot segments,
 * lower-case host), since the comparison is character for character.
 */
function checkedClientIdUrl(clientId: string): URL {
  if (clientId.length > 2048) throw refused(clientId, 'is longer than 2048 characters.');
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    throw refused(clientId, 'looks like a URL but is not one.');
  }
  if (url.protocol !== 'https:') throw refused(clientId, `uses ${url.protocol}; a client ID metadata document is fetched from an https URL only.`);
  if (url.username || url.password) throw refused(clientId, 'must not carry a user name or password.');
  if (url.hash || clientId.includes('#')) throw refused(clientId, 'must not have a fragment.');
  if (url.pathname === '/') throw refused(clientId, 'must have a path naming the document (https://host/path).');
  if (url.href !== clientId) throw refused(clientId, `is not in canonical form; write it as ${url.href}.`);
  return url;
}

function registrationFrom(clientId: string, body: Buffer): ClientRegistration {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    throw refused(clientId, 'names a document that is not JSON.');
  }
  const parsed = OAuthClientMetadataDocument.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw refused(clientId, `names a metadata document that is not valid: ${issue.path.join('.') || '(document)'}: ${issue.message}.`);
  }
  const document = parsed.data;
  if (document.client_id !== clientId)
    throw refused(clientId, `names a document whose client_id is ${JSON.stringify(document.client_id.slice(0, 300))}; it must equal the URL it is served at.`);
  for (const uri of document.redirect_uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw refused(clientId, `names a document with a redirect URI that is not accepted: ${problem}.`);
  }
  const grantTypes: ClientRegistration['grantTypes'] = [...new Set(document.grant_types ?? (['authorization_code', 'refresh_token'] as const))];
  if (!grantTypes.includes('authorization_code')) throw refused(clientId, 'names a document without the authorization_code grant, the only one it can use.');
  let scopes: ClientRegistration['scopes'];
  try {
    scopes = scopesFrom(document.scope, DEMO_TIER_SCOPES, DEMO_TIER_SCOPES);
  } catch (error) {
    throw refused(clientId, `names a document with an unknown scope: ${(error as Error).message}`);
  }
  return { id: clientId, issuedAt: 0, authMethod: 'none', redirectUris: document.redirect_uris, grantTypes, scopes, name: document.client_name };
}

interface CachedDocument {
  registration: ClientRegistration;
  expiresAt: number;
}

/**
 * Client ID metadata documents: a client names itself by the https URL of its metadata, and svc
 * fetches it when the client shows up (authorize, token). The fetch goes through the SSRF-guarded
 * fetcher (public addresses only, pinned, no redirects) under a size cap and a deadline. Answers
 * are cached as HTTP caching says (Cache-Control, Expires, Age; `no-store` and `private` are not
 * kept), at most a day and at most `maxCachedDocuments` of them, per replica: a cache, not state,
 * so replicas need not agree. A failed fetch is never cached, so a corrected document works at once.
 */
export class ClientMetadataDocuments {
  readonly #seam: SourceFetchSeam;
  readonly #cache = new Map<string, CachedDocument>();
  readonly #inFlight = new Map<string, Promise<ClientRegistration>>();

  constructor(seam: SourceFetchSeam = {}) {
    this.#seam = seam;
  }

  /**
   * The registration a client_id URL stands for; `invalid_client` says which rule it broke.
   * `beforeDownload` runs only when the document must be downloaded (not cached, no download of
   * it under way): the caller's per-address limit, which may refuse the download.
   */
  async registration(clientId: string, beforeDownload?: () => Promise<void>): Promise<ClientRegistration> {
    const url = checkedClientIdUrl(clientId);
    const cached = this.#cache.get(clientId);
    if (cached && cached.expiresAt > Date.now()) {
      // Least recently used goes first: re-inserting moves the entry to the end.
      this.#cache.delete(clientId);
      this.#cache.set(clientId, cached);
      return cached.registration;
    }
    this.#cache.delete(clientId);
    // Concurrent first uses of one client share one download.
    let pending = this.#inFlight.get(clientId);
    if (!pending) {
      pending = (async () => {
        await beforeDownload?.();
        return this.#fetch(clientId, url);
      })().finally(() => this.#inFlight.delete(clientId));
      this.#inFlight.set(clientId, pending);
    }
    return pending;
  }

  async #fetch(clientId: string, url: URL): Promise<ClientRegistration> {
    let response: Awaited<ReturnType<typeof fetchPublicHttpsResponse>>;
    try {
      response = await fetchPublicHttpsResponse(
        clientId,
        { maxBytes: limits.maxBytes, timeoutMs: limits.timeoutMs, maxRedirects: 0, accept: 'application/json', userAgent: 'svc-oauth-client-metadata' },
        this.#seam,
      );
    } catch (error) {
      if (!(error instanceof ServiceError)) throw error;
      throw refused(clientId, `names a metadata document that could not be used: ${error.message}`);
    }
    const registration = registrationFrom(clientId, response.body);
    const policy = new CachePolicy(
      { url: `${url.pathname}${url.search}`, method: 'GET', headers: { host: url.host, accept: 'application/json' } },
      { status: 200, headers: response.headers },
      { shared: true },
    );
    const ttlMs = policy.storable() ? Math.min(policy.timeToLive(), limits.maxCacheSeconds * 1000) : 0;
    if (ttlMs > 0) {
      while (this.#cache.size >= limits.maxCachedDocuments) this.#cache.delete(this.#cache.keys().next().value!);
      this.#cache.set(clientId, { registration, expiresAt: Date.now() + ttlMs });
    }
    return registration;
  }
}
