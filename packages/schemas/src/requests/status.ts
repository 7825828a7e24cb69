import { z } from 'zod';

/**
 * The spec leaves the statuses open; svc fixes them:
 * - submitted: filed, nobody looked yet (the only status moderation cannot set);
 * - under_review: an operator is looking at it;
 * - accepted: it will be done;
 * - rejected: it will not be done (reopen with under_review);
 * - duplicate: the same ask as `duplicate_of`, which carries it on (reopen with under_review);
 * - fulfilled: done, by the catalog artifact in `fulfilled_by` when there is one (final).
 */
export const catalogRequestStatuses = ['submitted', 'under_review', 'accepted', 'rejected', 'duplicate', 'fulfilled'] as const;
export const CatalogRequestStatus = z.enum(catalogRequestStatuses).meta({ id: 'CatalogRequestStatus' });
export type CatalogRequestStatus = z.infer<typeof CatalogRequestStatus>;
