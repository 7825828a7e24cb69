import { createLocalJWKSet, decodeProtectedHeader, errors as joseErrors, jwtVerify } from 'jose';
import { CompactReceipt, JsonWebKeySet, RECEIPT_ALGORITHM, RECEIPT_TYPE, ReceiptClaims } from '@svc/schemas';
import { SvcError } from '../errors.ts';

const MARKER = Symbol.for('svc.client.receipt-verification-error');

/** Which check a receipt failed, so a caller can say what is wrong with it. */
export type ReceiptCheck = 'format' | 'key' | 'signature' | 'issuer' | 'claims';

/** A receipt that does not verify; `check` names the step and `code` is stable (`receipt_<check>`). */
export class ReceiptVerificationError extends SvcError {
  readonly [MARKER] = true;
  readonly check: ReceiptCheck;

  constructor(check: ReceiptCheck, message: string, options?: { cause?: unknown }) {
    super(message, { code: `receipt_${check}_invalid`, cause: options?.cause });
    this.name = 'ReceiptVerificationError';
    this.check = check;
  }

  static override isInstance(error: unknown): error is ReceiptVerificationError {
    return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[MARKER] === true;
  }
}

export interface VerifyReceiptOptions {
  /** The issuer's published keys (`GET /.well-known/jwks.json`), fetched once and kept: nothing else is needed. */
  keys: JsonWebKeySet;
  /** The issuer you trust: the svc public base URL the receipt must name. */
  issuer: string;
}

export interface VerifiedReceipt {
  claims: ReceiptClaims;
  /** The key (`kid`) that signed it. */
  keyId: string;
}

/**
 * Checks an svc receipt offline: a compact JWS of type `svc-receipt+jwt`, signed (EdDSA) by one of
 * `keys`, issued by `issuer`, with well-formed claims. It proves svc signed that record; whether
 * the record still exists only the issuer can say (the board checks that on put).
 *
 * @example
 * ```ts
 * const keys = await svc.receipts.jwks();
 * const { claims } = await verifyReceipt(completion.receipt, { keys, issuer: svc.baseUrl });
 * process.stdout.write(`${claims.kind} ${claims.record_id}\n`);
 * ```
 */
export async function verifyReceipt(receipt: string, options: VerifyReceiptOptions): Promise<VerifiedReceipt> {
  const compact = CompactReceipt.safeParse(receipt.trim());
  if (!compact.success) throw new ReceiptVerificationError('format', 'Not a receipt: expected a compact JWS (three base64url parts joined by dots).');
  let kid: string | undefined;
  try {
    kid = decodeProtectedHeader(compact.data).kid;
  } catch (error) {
    throw new ReceiptVerificationError('format', 'Not a receipt: the JWS header is not readable JSON.', { cause: error });
  }
  const keys = JsonWebKeySet.parse(options.keys);
  if (!kid || !keys.keys.some((key) => key.kid === kid)) {
    throw new ReceiptVerificationError(
      'key',
      `The receipt names key ${kid ?? '(none)'}, which is not among the ${keys.keys.length} published key(s): signed by someone else, or fetch the issuer's keys again.`,
    );
  }
  try {
    const { payload } = await jwtVerify(compact.data, createLocalJWKSet(keys), { issuer: options.issuer, typ: RECEIPT_TYPE, algorithms: [RECEIPT_ALGORITHM] });
    const claims = ReceiptClaims.safeParse(payload);
    if (!claims.success)
      throw new ReceiptVerificationError(
        'claims',
        `The receipt's claims are not an svc receipt's: ${claims.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}.`,
      );
    return { claims: claims.data, keyId: kid };
  } catch (error) {
    if (ReceiptVerificationError.isInstance(error)) throw error;
    if (error instanceof joseErrors.JWTClaimValidationFailed && error.claim === 'iss') {
      throw new ReceiptVerificationError('issuer', `The receipt was issued by another service than ${options.issuer}.`, { cause: error });
    }
    if (error instanceof joseErrors.JWSSignatureVerificationFailed)
      throw new ReceiptVerificationError('signature', 'The signature does not match: the receipt was altered or signed with another key.', { cause: error });
    if (error instanceof joseErrors.JOSEError) throw new ReceiptVerificationError('format', `Not a valid svc receipt: ${error.message}.`, { cause: error });
    throw error;
  }
}
