import { createHash } from 'node:crypto';
import type { Principal } from '@svc/schemas';
import type { RequestContext } from '../../http/request-context.ts';

/** The key of a recognised principal; catalog requests and pulls are attributed by it. */
export const principalKey = (principal: Pick<Principal, 'kind' | 'id'>): string => `principal:${principal.kind}:${principal.id}`;

/**
 * Who a pull is attributed to, for "already recorded" and request de-duplication: the principal
 * when one is recognised, else a hash of the bearer (the catalog only tells callers apart with
 * it; it proves nothing), else the address.
 */
export function callerKey(request: Pick<RequestContext, 'principal' | 'bearer' | 'ip'>): string {
  if (request.principal.kind !== 'anonymous') return principalKey(request.principal);
  if (request.bearer) return `bearer:${createHash('sha256').update(request.bearer).digest('hex').slice(0, 32)}`;
  return `ip:${request.ip}`;
}
