import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint } from 'jose';
import { RECEIPT_ALGORITHM, type ReceiptPublicKey } from '@svc/schemas';
import type { SigningKeys } from '../../signing-keys.ts';

/** The PKCS #8 wrapping of a raw 32-byte Ed25519 seed (RFC 8410): how node takes a seed as a key. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export interface ReceiptSigningKey {
  /** The RFC 7638 thumbprint of the public key: the same on every replica that shares the secret. */
  kid: string;
  privateKey: KeyObject;
  publicJwk: ReceiptPublicKey;
}

/**
 * The receipt signing key of one generation, derived (HKDF, in signing-keys.ts) from the same
 * secret as the OAuth keys, so replicas that share SVC_SIGNING_SECRET sign with the same key and
 * nothing new has to be distributed. A new generation is a new key; see SVC_RECEIPT_KEY_GENERATION.
 */
export async function deriveReceiptSigningKey(keys: SigningKeys, generation: number): Promise<ReceiptSigningKey> {
  const seed = keys.key(`receipt-ed25519:${generation}`);
  const privateKey = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const { x } = createPublicKey(privateKey).export({ format: 'jwk' });
  if (!x) throw new Error('Ed25519 public key export gave no x coordinate');
  const kid = await calculateJwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x });
  return { kid, privateKey, publicJwk: { kty: 'OKP', crv: 'Ed25519', x, kid, alg: RECEIPT_ALGORITHM, use: 'sig' } };
}
