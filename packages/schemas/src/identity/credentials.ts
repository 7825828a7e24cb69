import { z } from 'zod';
import { CompactReceipt } from '../receipts/records.ts';
import { cursorList, cursorQuery } from '../cursor-list.ts';
import { Scope } from '../principal.ts';
import { KeyLimits } from './key-limits.ts';

/** Most developer keys one principal may hold active at once (configurable on the server). */
export const DEFAULT_MAX_ACTIVE_DEVELOPER_KEYS = 20;

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

export const CredentialIdParams = z.object({ credential_id: z.string().min(1).max(100) });
