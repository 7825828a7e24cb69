import CachePolicy from 'http-cache-semantics';
import { clientMetadataDocumentLimits as limits, OAuthClientMetadataDocument } from '@svc/schemas';
import { fetchPublicHttpsResponse, type FetchedResponse, type SourceFetchSeam } from '../../outbound/source-fetch.ts';
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
  policy: CachePolicy;
  /** Fresh until then; after it the copy is revalidated (a 304 keeps it) rather than thrown away. */
  freshUntil: number;
}

/** The request svc makes for a document, as http-cache-semantics wants to see it. */
const documentRequest = (url: URL) => ({ url: `${url.pathname}${url.search}`, method: 'GET', headers: { host: url.host, accept: 'application/json' } });

/**
 * Client ID metadata documents: a client names itself by the https URL of its metadata, and svc
 * fetches it when the client shows up (authorize, token). The fetch goes through the SSRF-guarded
 * fetcher (public addresses only, pinned, no redirects) under a size cap and a deadline. Answers
 * are cached as HTTP caching says (Cache-Control, Expires, Age; `no-store` and `private` are not
 * kept), fresh for at most a day, at most `maxCachedDocuments` of them, per replica: a cache, not
 * state, so replicas need not agree. A stale copy with a validator (ETag, Last-Modified) is
 * revalidated with a conditional request, and a 304 keeps it. A failed fetch is never cached (and
 * drops a stale copy), so a corrected document works at once.
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
   * `beforeDownload` runs only when the document must be downloaded or revalidated (no fresh copy,
   * no download of it under way): the caller's per-address limit, which may refuse the download.
   */
  async registration(clientId: string, beforeDownload?: () => Promise<void>): Promise<ClientRegistration> {
    const url = checkedClientIdUrl(clientId);
    const cached = this.#cache.get(clientId);
    if (cached) {
      // Least recently used goes first: re-inserting moves the entry to the end.
      this.#cache.delete(clientId);
      this.#cache.set(clientId, cached);
      if (cached.freshUntil > Date.now()) return cached.registration;
    }
    // Concurrent uses of one client share one download.
    let pending = this.#inFlight.get(clientId);
    if (!pending) {
      pending = (async () => {
        await beforeDownload?.();
        return this.#download(clientId, url, cached);
      })().finally(() => this.#inFlight.delete(clientId));
      this.#inFlight.set(clientId, pending);
    }
    return pending;
  }

  async #download(clientId: string, url: URL, stale: CachedDocument | undefined): Promise<ClientRegistration> {
    const request = documentRequest(url);
    const conditional = stale ? validatorsOf(stale.policy.revalidationHeaders(request)) : undefined;
    let response: FetchedResponse;
    try {
      response = await fetchPublicHttpsResponse(
        clientId,
        {
          maxBytes: limits.maxBytes,
          timeoutMs: limits.timeoutMs,
          maxRedirects: 0,
          accept: 'application/json',
          userAgent: 'svc-oauth-client-metadata',
          ...(conditional ? { conditional } : {}),
        },
        this.#seam,
      );
    } catch (error) {
      this.#cache.delete(clientId);
      if (!(error instanceof ServiceError)) throw error;
      throw refused(clientId, `names a metadata document that could not be used: ${error.message}`);
    }
    if (response.status === 304 && stale) {
      const revised = stale.policy.revalidatedPolicy(request, { status: 304, headers: response.headers });
      // A 304 that does not match the copy's validators says nothing about it: download it whole.
      if (revised.modified) return this.#download(clientId, url, undefined);
      this.#keep(clientId, stale.registration, revised.policy);
      return stale.registration;
    }
    let registration: ClientRegistration;
    try {
      registration = registrationFrom(clientId, response.body);
    } catch (error) {
      this.#cache.delete(clientId);
      throw error;
    }
    this.#keep(clientId, registration, new CachePolicy(request, { status: 200, headers: response.headers }, { shared: true }));
    return registration;
  }

  /** Stores a copy HTTP caching allows to store: fresh for its lifetime (at most a day), revalidated after it when it has a validator. */
  #keep(clientId: string, registration: ClientRegistration, policy: CachePolicy): void {
    const freshMs = Math.min(policy.timeToLive(), limits.maxCacheSeconds * 1000);
    const revalidatable = Object.keys(validatorsOf(policy.revalidationHeaders(documentRequest(new URL(clientId)))) ?? {}).length > 0;
    this.#cache.delete(clientId);
    if (!policy.storable() || (freshMs <= 0 && !revalidatable)) return;
    while (this.#cache.size >= limits.maxCachedDocuments) this.#cache.delete(this.#cache.keys().next().value!);
    this.#cache.set(clientId, { registration, policy, freshUntil: Date.now() + freshMs });
  }
}

/** The conditional headers of a revalidation (http-cache-semantics gives the whole header set). */
function validatorsOf(headers: Record<string, string | string[] | undefined>): { 'if-none-match'?: string; 'if-modified-since'?: string } | undefined {
  const etag = headers['if-none-match'];
  const since = headers['if-modified-since'];
  const validators = {
    ...(typeof etag === 'string' ? { 'if-none-match': etag } : {}),
    ...(typeof since === 'string' ? { 'if-modified-since': since } : {}),
  };
  return Object.keys(validators).length > 0 ? validators : undefined;
}
