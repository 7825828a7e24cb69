import { z } from 'zod';

/** The JOSE `typ` of an svc receipt: a JWT whose claims say which record svc vouches for. */
export const RECEIPT_TYPE = 'svc-receipt+jwt';
/** Receipts are signed with Ed25519 (RFC 8037 `EdDSA`), so anyone can check them with the public key alone. */
export const RECEIPT_ALGORITHM = 'EdDSA';
/** Where the issuer publishes its receipt keys, relative to its public base URL. */
export const RECEIPT_JWKS_PATH = '/.well-known/jwks.json';

/**
 * Kinds of record svc signs today. A feature that makes a new kind of record (eval results, job
 * results, credit usage) adds its kind here and a record check on the server (docs/receipts.md).
 */
export const receiptKinds = ['download-completion', 'developer-key-event'] as const;
export const ReceiptKind = z
  .string()
  .regex(/^[a-z][a-z0-9-]{0,63}$/, 'a receipt kind is a lower-case slug')
  .meta({ id: 'ReceiptKind', description: `What kind of record the receipt attests; known kinds: ${receiptKinds.join(', ')}.` });

/**
 * The claims of a receipt. `iat` is the record's own time (not the moment of signing), so every
 * answer about one record carries the same receipt; a retried call answers the same bytes.
 */
export const ReceiptClaims = z
  .looseObject({
    iss: z.string().describe('The issuer: the public base URL of the svc that made the record'),
    iat: z.number().int().nonnegative().describe('The record time, in seconds since the epoch'),
    kind: ReceiptKind,
    record_id: z.string().min(1).max(200).describe('The record id within its kind'),
    facts: z
      .record(z.string(), z.unknown())
      .describe('What the record says (for a download completion: artifact_id, revision, path, sha256, size_bytes, recorded_at)'),
  })
  .meta({ id: 'ReceiptClaims' });
export type ReceiptClaims = z.infer<typeof ReceiptClaims>;

/** A compact JWS (three base64url parts), as every answer that creates a record carries it. */
export const CompactReceipt = z
  .string()
  .max(16_384)
  .regex(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, 'a receipt is a compact JWS: three base64url parts joined by dots')
  .meta({
    id: 'CompactReceipt',
    description: `A compact JWS (typ ${RECEIPT_TYPE}, alg ${RECEIPT_ALGORITHM}) signed by svc; verify it with the keys at ${RECEIPT_JWKS_PATH}.`,
  });

/** One published public key (RFC 8037 OKP). */
export const ReceiptPublicKey = z
  .looseObject({
    kty: z.literal('OKP'),
    crv: z.literal('Ed25519'),
    x: z.string(),
    kid: z.string(),
    alg: z.literal(RECEIPT_ALGORITHM),
    use: z.literal('sig'),
  })
  .meta({ id: 'ReceiptPublicKey' });
export type ReceiptPublicKey = z.infer<typeof ReceiptPublicKey>;

export const JsonWebKeySet = z.object({ keys: z.array(ReceiptPublicKey) }).meta({
  id: 'JsonWebKeySet',
  description: 'Every receipt key this issuer has signed with, current first. Keys stay published after rotation, so old receipts stay verifiable.',
});
export type JsonWebKeySet = z.infer<typeof JsonWebKeySet>;

/** What the server checked when it set `receipt_verified` on a blackboard item. */
export const ReceiptVerification = z
  .object({
    kind: ReceiptKind,
    record_id: z.string(),
    issuer: z.string(),
    key_id: z.string(),
    verified_at: z.string().describe('When the server checked it (at put time)'),
  })
  .meta({ id: 'ReceiptVerification' });
export type ReceiptVerification = z.infer<typeof ReceiptVerification>;

/**
 * The shape of `value.receipt` the board recognises as an svc receipt: an object whose `jws` is a
 * compact receipt. Other fields of the object, and any other `receipt`, are kept verbatim.
 */
export const BOARD_RECEIPT_FIELD = 'jws';
