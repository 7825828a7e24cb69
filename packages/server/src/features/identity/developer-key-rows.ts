import type { DeveloperCredential, DeveloperCredentialReceipt, EffectiveLimits, KeyLimits, Scope } from '@svc/schemas';
import { keyLimitNames } from '@svc/schemas';
import { ServiceError } from '../../service-error.ts';
import { keyPrefixOf } from './developer-key-format.ts';

/** The rows of developer keys and their receipts as stored, and their contract forms. */
export interface KeyRow {
  id: string;
  owner: string;
  name: string;
  scopes: Scope[];
  secret_hash: string;
  status: 'active' | 'rotated' | 'revoked';
  created_at: Date;
  revoked_at: Date | null;
  rotated_from: string | null;
  replaced_by: string | null;
  ending_receipt_id: string | null;
  /** Only the limits the key has set; an unset one is absent. */
  limits: EffectiveLimits;
  expires_at: Date | null;
  last_used_at: Date | null;
  /** Summed from the key's usage rows by the list's query; absent where a statement returns the bare row (create, rotate, update: the list reads it). */
  spent_credits?: string | number | null;
}

/** A key's columns with the credits it spent, for the statements that show keys (`k` is svc_developer_keys). */
export const KEY_COLUMNS_WITH_SPEND = 'k.*, (SELECT COALESCE(sum(u.credits), 0) FROM svc_developer_key_usage u WHERE u.credential_id = k.id) AS spent_credits';

export interface ReceiptRow {
  seq: string;
  id: string;
  credential_id: string;
  event: DeveloperCredentialReceipt['event'];
  occurred_at: Date;
  actor: string;
  name: string;
  scopes: Scope[];
  related_credential_id: string | null;
}

export const toCredential = (row: KeyRow): DeveloperCredential => ({
  credential_id: row.id,
  name: row.name,
  scopes: row.scopes,
  status: row.status,
  key_prefix: keyPrefixOf(row.id),
  created_at: new Date(row.created_at).toISOString(),
  revoked_at: row.revoked_at ? new Date(row.revoked_at).toISOString() : null,
  rotated_from: row.rotated_from,
  replaced_by: row.replaced_by,
  limits: Object.fromEntries(keyLimitNames.map((name) => [name, row.limits?.[name] ?? null])) as Required<KeyLimits>,
  owner: row.owner,
  expires_at: row.expires_at ? new Date(row.expires_at).toISOString() : null,
  last_used_at: row.last_used_at ? new Date(row.last_used_at).toISOString() : null,
  spent_credits: Number(row.spent_credits ?? 0),
});

export const toReceipt = (row: ReceiptRow, signedReceipt: string): DeveloperCredentialReceipt => ({
  receipt_id: row.id,
  credential_id: row.credential_id,
  event: row.event,
  occurred_at: new Date(row.occurred_at).toISOString(),
  actor: row.actor,
  name: row.name,
  scopes: row.scopes,
  related_credential_id: row.related_credential_id,
  signed_receipt: signedReceipt,
});

/**
 * A token acts on a key only within its own scopes: a session narrowed by refresh must not mint,
 * by rotation, a secret it could not create, nor end a key whose powers it was never given.
 */
export function requireHeld(keyScopes: readonly Scope[], heldScopes: readonly Scope[], action: string): void {
  const notHeld = keyScopes.filter((scope) => !heldScopes.includes(scope));
  if (notHeld.length > 0) throw new ServiceError('scope_not_held', `A token cannot ${action} scopes it lacks: ${notHeld.join(', ')}.`);
}

export const notFound = (credentialId: string) => new ServiceError('credential_not_found', `No developer key ${credentialId} among yours.`);
