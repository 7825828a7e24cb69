import { hkdfSync, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * One key per purpose, so a token of one kind can never pass as another. `receipt-ed25519:<n>`
 * seeds generation n of the receipt signing key (features/receipts/receipt-keys.ts).
 */
export type KeyPurpose = 'client' | 'client-secret' | 'browser-subject' | 'code' | 'access' | 'refresh' | `receipt-ed25519:${number}`;

export interface SigningKeys {
  key(purpose: KeyPurpose): Uint8Array;
  /** The data directory's file holding the secret (generated on first start); undefined when it came from SVC_SIGNING_SECRET. */
  readonly file: string | undefined;
}

/**
 * The OAuth signing keys, derived (HKDF-SHA256) from SVC_SIGNING_SECRET so every replica that
 * shares the secret agrees, or from a secret generated once into the data directory (mode 0600)
 * for a single node.
 */
export async function loadSigningKeys(configured: string | undefined, dataDir: string): Promise<SigningKeys> {
  let secret = configured;
  let file: string | undefined;
  if (!secret) {
    file = path.join(dataDir, 'signing-secret');
    try {
      const existing = (await readFile(file, 'utf8')).trim();
      if (existing.length >= 32) secret = existing;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    if (!secret) {
      await mkdir(dataDir, { recursive: true, mode: 0o700 });
      secret = randomBytes(48).toString('base64url');
      await writeFile(file, `${secret}\n`, { mode: 0o600, flag: 'w' });
    }
  }
  const derived = new Map<KeyPurpose, Uint8Array>();
  const material = Buffer.from(secret, 'utf8');
  return {
    file,
    key(purpose) {
      let key = derived.get(purpose);
      if (!key) {
        key = new Uint8Array(hkdfSync('sha256', material, Buffer.from('svc-identity-v1'), Buffer.from(purpose), 32));
        derived.set(purpose, key);
      }
      return key;
    },
  };
}
