import { z } from 'zod';
import { CompactReceipt } from '../receipts/records.ts';
import { cursorList, cursorQuery } from '../cursor-list.ts';
import { everyoneQuery, everyoneView } from '../everyone-view.ts';
import { Scope } from '../principal.ts';
import { KeyLimits } from './key-limits.ts';

/** Most developer keys one principal may hold active at once (configurable on the server). */
export const DEFAULT_MAX_ACTIVE_DEVELOPER_KEYS = 20;

/** The longest a key may be given to live when it is created with an expiry (about five years). */
export const MAX_KEY_LIFETIME_DAYS = 1825;

/** `dk_` and 22 base62 characters; the public half of a developer key. */
export const CREDENTIAL_ID_PATTERN = /^dk_[0-9A-Za-z]{22}$/;
/** `svc_dk_<22 id chars>_<32 secret chars><6 checksum chars>`: see docs/identity.md. */
export const DEVELOPER_KEY_PATTERN = /^svc_dk_([0-9A-Za-z]{22})_([0-9A-Za-z]{32})([0-9A-Za-z]{6})$/;

export const CredentialStatus = z.enum(['active', 'rotated', 'revoked']);

export const DeveloperCredentialCreateRequest = z
  .strictObject({
    name: z.string().trim().min(1).max(100).describe('A label for people; not secret'),
    scopes: z
      .array(Scope)
      .min(1)
      .max(8)
      .refine((list) => new Set(list).size === list.length, 'scopes must not repeat')
      .describe('Scopes the key carries; each must be held by the calling principal'),
    limits: KeyLimits.optional().describe('Limits of the key; absent fields fall back to the configured defaults for keys'),
    expires_in_days: z
      .number()
      .int('expires_in_days must be a whole number')
      .min(1, 'expires_in_days must be at least 1')
      .max(MAX_KEY_LIFETIME_DAYS, `expires_in_days is at most ${MAX_KEY_LIFETIME_DAYS}`)
      .optional()
      .describe(`Days until the key stops working by itself (1..${MAX_KEY_LIFETIME_DAYS}); absent: it lasts until revoked. A rotation keeps the expiry.`),
  })
  .meta({ id: 'DeveloperCredentialCreateRequest' });
export type DeveloperCredentialCreateRequest = z.input<typeof DeveloperCredentialCreateRequest>;

/** Non-secret metadata of a developer key. */
export const DeveloperCredential = z
  .object({
    credential_id: z.string(),
    name: z.string(),
    scopes: z.array(Scope),
    status: CredentialStatus,
    key_prefix: z.string().describe('The key up to its secret part, for recognising it in a list'),
    created_at: z.string(),
    revoked_at: z.string().nullable(),
    rotated_from: z.string().nullable(),
    replaced_by: z.string().nullable(),
    limits: KeyLimits.required().describe("The key's own limits; null fields take the configured default for keys"),
    owner: z.string().describe('The principal the key acts for (the OAuth agent that made it)'),
    expires_at: z
      .string()
      .nullable()
      .describe('When the key stops working by itself; null: it lasts until revoked. A call with an expired key is 401 like any unknown key'),
    last_used_at: z
      .string()
      .nullable()
      .describe("When a request last authenticated with the key, to within the server's usage flush interval (SVC_KEY_USAGE_FLUSH_MS); null: never"),
    spent_credits: z.number().int().nonnegative().describe('Credits the key has spent (committed) since it was made'),
  })
  .meta({ id: 'DeveloperCredential' });
export type DeveloperCredential = z.infer<typeof DeveloperCredential>;

/** One append-only lifecycle record of a key. Never holds the secret. */
export const DeveloperCredentialReceipt = z
  .object({
    receipt_id: z.string(),
    credential_id: z.string(),
    event: z.enum(['created', 'rotated', 'revoked']),
    occurred_at: z.string(),
    actor: z.string().describe('The principal that acted'),
    name: z.string(),
    scopes: z.array(Scope),
    related_credential_id: z.string().nullable().describe('rotated: the replacement; created by rotation: the key it replaced'),
    signed_receipt: CompactReceipt.describe('This receipt signed by svc (kind developer-key-event); verifiable offline with /.well-known/jwks.json'),
  })
  .meta({ id: 'DeveloperCredentialReceipt' });
export type DeveloperCredentialReceipt = z.infer<typeof DeveloperCredentialReceipt>;

/** Create and rotate answers: the only place the secret ever appears. */
export const DeveloperCredentialSecretResponse = z
  .object({
    credential: DeveloperCredential,
    secret: z.string().describe('The developer key; shown once, store it now'),
    receipt: DeveloperCredentialReceipt,
  })
  .meta({ id: 'DeveloperCredentialSecretResponse' });
export type DeveloperCredentialSecretResponse = z.infer<typeof DeveloperCredentialSecretResponse>;

export const DeveloperCredentialListResponse = cursorList(DeveloperCredential).meta({ id: 'DeveloperCredentialListResponse' });
export type DeveloperCredentialListResponse = z.infer<typeof DeveloperCredentialListResponse>;

/** A repeated revoke answers the same receipt. */
export const DeveloperCredentialRevokeResponse = z
  .object({ credential_id: z.string(), status: CredentialStatus, revoked_at: z.string(), receipt: DeveloperCredentialReceipt })
  .meta({ id: 'DeveloperCredentialRevokeResponse' });
export type DeveloperCredentialRevokeResponse = z.infer<typeof DeveloperCredentialRevokeResponse>;

export const DeveloperCredentialReceiptListResponse = cursorList(DeveloperCredentialReceipt).meta({ id: 'DeveloperCredentialReceiptListResponse' });
export type DeveloperCredentialReceiptListResponse = z.infer<typeof DeveloperCredentialReceiptListResponse>;

export const CredentialPage = cursorQuery({ max: 100, default: 50 });

/** The operator sees every owner's keys (`svc keys list --everyone`, the console's operator keys page). */
export const everyonesKeys = everyoneView({ operator: true });

/** The longest search text of the key list. */
export const MAX_KEY_SEARCH_LENGTH = 100;

export const CredentialListQuery = CredentialPage.extend({
  q: z
    .string()
    .trim()
    .max(MAX_KEY_SEARCH_LENGTH)
    .optional()
    .transform((value) => (value ? value : undefined))
    .describe(`Only keys whose name, id or owner holds this text, case aside (at most ${MAX_KEY_SEARCH_LENGTH} characters)`),
  ...everyoneQuery(everyonesKeys),
});

export const CredentialIdParams = z.object({ credential_id: z.string().min(1).max(100) });
