import { createHash } from 'node:crypto';
import type { CatalogRequestDetails, CatalogRequestKind } from '@svc/schemas';

/** A submission's body after the contract's parsing (trimmed, unknown fields refused). */
export type CatalogRequestBody = CatalogRequestDetails;

/** Whitespace runs count as one space, so re-wrapped text is still the same request. */
const collapse = (text: string) => text.replace(/\s+/g, ' ');

/**
 * The identity of a request for replay detection: kind plus every field, whitespace collapsed,
 * the repo lower-cased (hosts treat repository names case-insensitively), keys in fixed order.
 */
export function requestFingerprint(kind: CatalogRequestKind, body: CatalogRequestBody): string {
  const fields = Object.entries(body)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => [key, key === 'repo' ? collapse(String(value)).toLowerCase() : collapse(String(value))] as const)
    .sort(([a], [b]) => a.localeCompare(b));
  return createHash('sha256')
    .update(JSON.stringify([kind, fields]))
    .digest('hex');
}

/** The stored details: only the fields that were given. */
export function storedDetails(body: CatalogRequestBody): CatalogRequestDetails {
  return Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined)) as CatalogRequestDetails;
}

/** What a mirror or source request is about, for the radar: the catalog artifact or the upstream repository. */
export const artifactSubject = (artifactId: string) => `artifact:${artifactId}`;
export const repoSubject = (source: string, repo: string) => `repo:${source}:${collapse(repo).toLowerCase()}`;
