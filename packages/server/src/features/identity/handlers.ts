import { developerKeysContract, oauthContract, type OAuthError } from '@svc/schemas';
import type { ServerDeps } from '../../deps.ts';
import { defineHandlers } from '../../http/handler-types.ts';
import type { RequestContext } from '../../http/request-context.ts';
import type { DeveloperKeyService } from './developer-key-service.ts';
import type { KeyUsageReports } from './key-usage-report.ts';
import type { KeyWebhooks } from './key-webhooks.ts';
import { authorizationServerMetadata, protectedResourceMetadata } from './metadata.ts';
import { OAuthFailure, type OAuthService } from './oauth-service.ts';

/** Answers that carry a secret or a token must never be cached (RFC 6749 5.1). */
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' } as const;

function oauthErrorBody(failure: OAuthFailure, request: RequestContext): OAuthError {
  return {
    error: failure.error,
    error_description: failure.message,
    code: failure.error === 'invalid_client' ? 'oauth_invalid_client' : `oauth_error:${failure.error}`,
    request_id: request.requestId,
  };
}

/** An error of an endpoint that authenticates clients (token, revoke): 401 with a Basic challenge for a bad client, else 400. */
function clientEndpointFailure(failure: OAuthFailure, basic: { id: string; secret: string } | undefined, request: RequestContext) {
  if (failure.error === 'invalid_client') {
    return {
      status: 401 as const,
      headers: { ...NO_STORE, ...(basic ? { 'www-authenticate': 'Basic realm="svc"' } : {}) },
      body: oauthErrorBody(failure, request),
    };
  }
  return { status: 400 as const, headers: NO_STORE, body: oauthErrorBody(failure, request) };
}

/** RFC 6749 2.3.1: `Basic base64(urlencode(id):urlencode(secret))`. */
function basicCredentials(header: string | string[] | undefined): { id: string; secret: string } | undefined {
  if (typeof header !== 'string') return undefined;
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  const formDecode = (value: string) => {
    try {
      return decodeURIComponent(value.replace(/\+/g, ' '));
    } catch {
      return value;
    }
  };
  return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
}

/** The authorization endpoint's cookie naming the browser that signs in to the console (see OAuthService.authorize). */
const BROWSER_COOKIE = 'svc_browser';
/** 400 days, the most a browser keeps a cookie; each sign-in renews it. */
const BROWSER_COOKIE_SECONDS = 400 * 24 * 3600;

function browserCookie(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  for (const pair of header.split(';')) {
    const [name, value] = pair.trim().split('=', 2);
    if (name === BROWSER_COOKIE) return value;
  }
  return undefined;
}

export function createOAuthHandlers(deps: Pick<ServerDeps, 'publicUrls'>, service: OAuthService) {
  const baseUrl = () => deps.publicUrls().baseUrl;
  const asMetadata = async () => ({ status: 200 as const, body: authorizationServerMetadata(baseUrl()) });
  return defineHandlers(oauthContract, {
    async register({ body }, request) {
      await service.limitRegistrations(request.ip);
      try {
        return { status: 201, headers: NO_STORE, body: await service.register(body) };
      } catch (error) {
        if (error instanceof OAuthFailure) return { status: 400, body: oauthErrorBody(error, request) };
        throw error;
      }
    },
    async authorize({ query }, request) {
      const outcome = await service.authorize(query, request.ip, browserCookie(request.headers.cookie));
      if (outcome.kind === 'direct') return { status: 400, headers: NO_STORE, body: oauthErrorBody(outcome.failure, request) };
      // Readable by no script, sent only to this endpoint, and not on a cross-site subrequest.
      const secure = baseUrl().startsWith('https:') ? '; Secure' : '';
      const cookie: Record<string, string> = outcome.browser
        ? { 'set-cookie': `${BROWSER_COOKIE}=${outcome.browser}; Path=/oauth/authorize; Max-Age=${BROWSER_COOKIE_SECONDS}; HttpOnly; SameSite=Lax${secure}` }
        : {};
      return { status: 302, headers: { location: outcome.location, ...NO_STORE, ...cookie } };
    },
    async token({ body }, request) {
      await service.limitTokenRequests(request.ip);
      const basic = basicCredentials(request.headers.authorization);
      try {
        return { status: 200, headers: NO_STORE, body: await service.token(body, basic, request.ip) };
      } catch (error) {
        if (!(error instanceof OAuthFailure)) throw error;
        return clientEndpointFailure(error, basic, request);
      }
    },
    async revoke({ body }, request) {
      await service.limitTokenRequests(request.ip);
      const basic = basicCredentials(request.headers.authorization);
      try {
        await service.revoke(body, basic, request.ip);
        return { status: 200, headers: NO_STORE };
      } catch (error) {
        if (!(error instanceof OAuthFailure)) throw error;
        return clientEndpointFailure(error, basic, request);
      }
    },
    authorizationServer: asMetadata,
    authorizationServerMcp: asMetadata,
    authorizationServerMcpPrefix: asMetadata,
    async protectedResource() {
      return { status: 200, body: protectedResourceMetadata(deps.publicUrls(), 'svc') };
    },
    async protectedResourceMcp() {
      return { status: 200, body: protectedResourceMetadata(deps.publicUrls(), 'mcp') };
    },
    async protectedResourceMcpPrefix() {
      return { status: 200, body: protectedResourceMetadata(deps.publicUrls(), 'mcp') };
    },
    async protectedResourceApiMcp() {
      return { status: 200, body: protectedResourceMetadata(deps.publicUrls(), 'api-mcp') };
    },
    async whoami(_input, { principal }) {
      return {
        status: 200,
        body: {
          kind: principal.kind,
          id: principal.id,
          scopes: [...principal.scopes],
          credential: principal.credential,
          ...(principal.developerKeyId ? { credential_id: principal.developerKeyId } : {}),
          ...(principal.clientId ? { client_id: principal.clientId } : {}),
          ...(principal.resource ? { resource: principal.resource } : {}),
        },
      };
    },
  });
}

export function createCredentialsHandlers(keys: DeveloperKeyService, reports: KeyUsageReports, webhooks: KeyWebhooks) {
  return defineHandlers(developerKeysContract, {
    async create({ body }, { principal }) {
      return { status: 201, headers: NO_STORE, body: await keys.create(principal.id, body, principal.scopes) };
    },
    async list({ query }, { rows }) {
      return { status: 200, body: await keys.list(rows, { limit: query.limit, cursor: query.cursor, search: query.q }) };
    },
    async rotate({ params }, { principal }) {
      return { status: 200, headers: NO_STORE, body: await keys.rotate(principal.id, params.credential_id, principal.scopes) };
    },
    async revoke({ params }, { principal }) {
      return { status: 200, body: await keys.revoke(principal.id, params.credential_id, principal.scopes) };
    },
    async receipts({ params, query }, { principal }) {
      return { status: 200, body: await keys.receipts(principal.id, params.credential_id, query.limit, query.cursor) };
    },
    async update({ params, body }, { principal }) {
      return { status: 200, body: await keys.update(principal, params.credential_id, body.limits) };
    },
    async usageReport({ query }) {
      return { status: 200, body: await reports.report(query) };
    },
    async usage({ params, query }, { principal }) {
      return { status: 200, body: await keys.usage(principal, params.credential_id, query.limit, query.cursor) };
    },
    async setWebhook({ params, body }, { principal }) {
      return { status: 200, headers: NO_STORE, body: await webhooks.set(principal.id, params.credential_id, body.url, principal.scopes) };
    },
    async webhook({ params }, { principal }) {
      return { status: 200, body: await webhooks.get(principal.id, params.credential_id) };
    },
    async removeWebhook({ params }, { principal }) {
      return { status: 200, body: await webhooks.remove(principal.id, params.credential_id, principal.scopes) };
    },
  });
}
