import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { anonymousPrincipal, scopes as allScopes, type AuthRequirement, type Principal } from '@svc/schemas';
import { ServiceError } from '../service-error.ts';
import type { RequestContext } from './request-context.ts';

/**
 * Turns a presented credential into a principal. Answers null when the credential is not of
 * its kind; throws `invalid_token` when it is of its kind but no longer good (revoked, expired).
 * The identity feature adds resolvers for OAuth tokens and developer keys.
 */
export interface PrincipalResolver {
  readonly name: string;
  resolve(token: string, hints?: ResolveHints): Promise<Principal | null>;
}

/** What the adapter tells a resolver about the request: whether it may count it against a requests-per-minute limit (docs/limits.md). */
export interface ResolveHints {
  countRequest: boolean;
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/** The operator token, compared in constant time (digests make the lengths equal). */
export function operatorResolver(operatorToken: string): PrincipalResolver {
  const expected = digest(operatorToken);
  const operator: Principal = Object.freeze({ kind: 'operator', id: 'operator', scopes: [...allScopes], credential: 'operator_token' });
  return {
    name: 'operator',
    async resolve(token) {
      return timingSafeEqual(digest(token), expected) ? operator : null;
    },
  };
}

export const openAccessPrincipal: Principal = Object.freeze({ kind: 'open', id: 'open', scopes: [...allScopes], credential: 'none' });

/** `Authorization: Bearer <token>`; undefined when absent; `invalid` when another scheme. */
export function bearerFrom(header: string | undefined): { token?: string; invalid?: boolean } {
  if (!header) return {};
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? { token: match[1] } : { invalid: true };
}

export interface AuthenticateOptions {
  requirement: AuthRequirement;
  authorization: string | undefined;
  resolvers: readonly PrincipalResolver[];
  openAccess: boolean;
  /** For `WWW-Authenticate: Bearer resource_metadata="..."` (RFC 9728). */
  resourceMetadataUrl: () => string;
  /** A scoped request without an Idempotency-Key: a resolver may count it in its own query. */
  countRequest?: boolean;
  /**
   * The principal this very `authorization` header already resolved to, carried by an in-process
   * call (carriedPrincipal): taken instead of walking the resolvers again; the route's requirement
   * is checked on it exactly as on a resolved one.
   */
  resolved?: Principal | undefined;
}

/**
 * The principal an in-process request carries from the outer request that authenticated its
 * credential (an MCP tool call, dispatch.ts). Module-private: only a request object built in
 * process can hold it, never anything a client sends (headers are strings, this is a Symbol).
 */
const CARRIED_PRINCIPAL = Symbol('principal carried from the outer request');

/**
 * Marks an in-process request as made with a credential already resolved to `principal`; the
 * caller guarantees the request's `Authorization` header is the one that resolved to it.
 */
export function carryPrincipal(request: object, principal: Principal): void {
  (request as { [CARRIED_PRINCIPAL]?: Principal })[CARRIED_PRINCIPAL] = principal;
}

/**
 * The principal to carry into an in-process call made for `request` (DispatchCaller.principal):
 * only one resolved from the request's own `Authorization` header, never the anonymous one (a
 * request without a credential, or open access, is authenticated by the route as REST does).
 */
export function principalToCarry(request: RequestContext): Principal | undefined {
  return typeof request.headers.authorization === 'string' && request.principal.kind !== 'anonymous' ? request.principal : undefined;
}

/**
 * A principal carried by a request emulated over HTTP (light-my-request builds the request
 * object, so no Symbol can be set on it): a header naming a random nonce that only this process
 * knows, and only while the call lasts (a client cannot guess one, and one it sends names nothing).
 */
const CARRIED_HEADER = 'x-svc-carried-principal';
const carriedByNonce = new Map<string, Principal>();

/** Sets the carrying header on an emulated request's `headers`; call the answer once the route has authenticated it (the call ended). */
export function carryPrincipalInHeaders(headers: Record<string, string>, principal: Principal): () => void {
  const nonce = randomBytes(18).toString('base64url');
  carriedByNonce.set(nonce, principal);
  headers[CARRIED_HEADER] = nonce;
  return () => void carriedByNonce.delete(nonce);
}

/** The principal an in-process request carries (carryPrincipal, carryPrincipalInHeaders); undefined for every request from a socket. */
export function carriedPrincipal(request: object): Principal | undefined {
  const own = (request as { [CARRIED_PRINCIPAL]?: Principal })[CARRIED_PRINCIPAL];
  if (own || carriedByNonce.size === 0) return own;
  const nonce = (request as { headers?: Record<string, unknown> }).headers?.[CARRIED_HEADER];
  return typeof nonce === 'string' ? carriedByNonce.get(nonce) : undefined;
}

function challenge(options: AuthenticateOptions, extra = ''): Record<string, string> {
  return { 'www-authenticate': `Bearer realm="svc", resource_metadata="${options.resourceMetadataUrl()}"${extra}` };
}

/** Resolves the caller and checks the route's requirement; throws the right 401 or 403. */
export async function authenticate(options: AuthenticateOptions): Promise<{ principal: Principal; bearer?: string }> {
  const { requirement } = options;
  const { token, invalid } = bearerFrom(options.authorization);
  let principal: Principal | null = null;
  if (token && options.resolved) principal = options.resolved;
  else if (token) {
    try {
      for (const resolver of options.resolvers) {
        principal = await resolver.resolve(token, { countRequest: options.countRequest === true });
        if (principal) break;
      }
    } catch (error) {
      if (requirement.kind !== 'public') throw error;
    }
  }
  if (requirement.kind === 'public') return { principal: principal ?? anonymousPrincipal, bearer: token };

  if (invalid)
    throw new ServiceError('unauthorized', 'Send the credential as `Authorization: Bearer <token>`.', {
      headers: challenge(options, ', error="invalid_request"'),
    });
  if (token && !principal)
    throw new ServiceError('invalid_token', 'The bearer token is not valid.', { headers: challenge(options, ', error="invalid_token"') });
  if (!principal) {
    if (options.openAccess && requirement.kind === 'scoped') principal = openAccessPrincipal;
    else throw new ServiceError('unauthorized', 'Authentication required: send `Authorization: Bearer <token>`.', { headers: challenge(options) });
  }

  if (requirement.kind === 'bearer') {
    if (principal.credential === 'developer_key')
      throw new ServiceError('developer_key_not_accepted', 'This endpoint takes a bearer token, not a developer API key.');
  }
  const allowedKinds = requirement.principals;
  if (allowedKinds && !allowedKinds.includes(principal.kind)) {
    throw new ServiceError('principal_not_allowed', `This endpoint is not available to the ${principal.kind} principal (allowed: ${allowedKinds.join(', ')}).`);
  }
  if (requirement.kind === 'scoped' && principal.kind !== 'operator') {
    const missing = requirement.scopes.filter((scope) => !principal.scopes.includes(scope));
    if (missing.length > 0) {
      throw new ServiceError(
        `insufficient_scope:${missing.join(',')}`,
        `The credential lacks the scope${missing.length > 1 ? 's' : ''} ${missing.join(', ')}.`,
        {
          headers: { 'www-authenticate': `Bearer realm="svc", error="insufficient_scope", scope="${requirement.scopes.join(' ')}"` },
        },
      );
    }
  }
  return { principal, bearer: token };
}
