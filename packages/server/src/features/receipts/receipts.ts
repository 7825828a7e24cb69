import { isDeepStrictEqual } from 'node:util';
import { createLocalJWKSet, errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import type { Logger } from 'pino';
import {
  BOARD_RECEIPT_FIELD,
  CompactReceipt,
  RECEIPT_ALGORITHM,
  RECEIPT_TYPE,
  ReceiptClaims,
  type JsonWebKeySet,
  type ReceiptVerification,
} from '@svc/schemas';
import type { ReceiptKeyStore } from './receipt-key-store.ts';
import type { ReceiptSigningKey } from './receipt-keys.ts';

/** A record as a receipt states it. */
export interface ReceiptRecord {
  /** What kind of record (`download-completion`, `developer-key-event`, ...); see receiptKinds. */
  kind: string;
  recordId: string;
  /** What the record says, as JSON; built from the stored record alone so it can be rebuilt. */
  facts: Record<string, unknown>;
  /** The record's own time: the receipt's `iat`, so a record always answers the same receipt. */
  recordedAt: Date | string;
}

/** Rebuilds a record of one kind from storage: undefined when it no longer exists. */
export type RecordLoader = (recordId: string) => Promise<Omit<ReceiptRecord, 'kind' | 'recordId'> | undefined>;

const secondsOf = (time: Date | string) => Math.floor(new Date(time).getTime() / 1000);

/**
 * svc's receipts: signs records (any feature calls `sign` for the records it creates) and checks
 * a receipt a blackboard post carries (signature, issuer, and the record still there and the same).
 */
export class Receipts {
  readonly #key: ReceiptSigningKey;
  readonly #store: ReceiptKeyStore;
  readonly #issuer: () => string;
  readonly #log: Logger;
  readonly #loaders = new Map<string, RecordLoader>();

  constructor(options: { key: ReceiptSigningKey; store: ReceiptKeyStore; issuer: () => string; log: Logger }) {
    this.#key = options.key;
    this.#store = options.store;
    this.#issuer = options.issuer;
    this.#log = options.log;
  }

  get currentKeyId(): string {
    return this.#key.kid;
  }

  /**
   * A compact JWS of the record. Ed25519 signatures are deterministic and the claims come from
   * the record alone, so signing one record twice gives the same receipt (with the same key).
   *
   * @example
   * ```ts
   * const receipt = await receipts.sign({ kind: 'job-result', recordId: job.id, facts: { operation, result_sha256 }, recordedAt: job.finishedAt });
   * ```
   */
  async sign(record: ReceiptRecord): Promise<string> {
    return new SignJWT({ kind: record.kind, record_id: record.recordId, facts: record.facts })
      .setProtectedHeader({ alg: RECEIPT_ALGORITHM, typ: RECEIPT_TYPE, kid: this.#key.kid })
      .setIssuer(this.#issuer())
      .setIssuedAt(secondsOf(record.recordedAt))
      .sign(this.#key.privateKey);
  }

  /** Lets the board verify receipts of `kind`: the feature that owns those records says how to load one. */
  registerRecordLoader(kind: string, loader: RecordLoader): void {
    if (this.#loaders.has(kind)) throw new Error(`A record loader for receipt kind "${kind}" is already registered`);
    this.#loaders.set(kind, loader);
  }

  keySet(): Promise<JsonWebKeySet> {
    return this.#store.keySet(this.#key.kid);
  }

  /**
   * The verification of `value.receipt` of a blackboard put, or undefined when it does not hold
   * for any reason: not an svc receipt, bad signature, unknown key, another issuer, a kind with
   * no loader, a record gone or different. Never throws: the post is stored either way.
   */
  async verifyBoardReceipt(candidate: unknown): Promise<ReceiptVerification | undefined> {
    if (!candidate || typeof candidate !== 'object' || Array.isArray(candidate)) return undefined;
    const jws = CompactReceipt.safeParse((candidate as Record<string, unknown>)[BOARD_RECEIPT_FIELD]);
    if (!jws.success) return undefined;
    try {
      const { payload, protectedHeader } = await jwtVerify(jws.data, createLocalJWKSet(await this.keySet()), {
        issuer: this.#issuer(),
        typ: RECEIPT_TYPE,
        algorithms: [RECEIPT_ALGORITHM],
      });
      const claims = ReceiptClaims.safeParse(payload);
      // svc always names its key; jose would try a lone published key for a header without one.
      if (!claims.success || !protectedHeader.kid) return undefined;
      const loader = this.#loaders.get(claims.data.kind);
      const stored = loader ? await loader(claims.data.record_id) : undefined;
      if (!stored || secondsOf(stored.recordedAt) !== claims.data.iat || !isDeepStrictEqual(stored.facts, claims.data.facts)) return undefined;
      return {
        kind: claims.data.kind,
        record_id: claims.data.record_id,
        issuer: claims.data.iss,
        key_id: protectedHeader.kid,
        verified_at: new Date().toISOString(),
      };
    } catch (error) {
      // jose's refusals (signature, key, issuer, type) are the expected "does not hold"; anything
      // else (the database) still only costs the post its flag, but is worth a line in the log.
      if (!(error instanceof joseErrors.JOSEError)) {
        this.#log.warn({ err: error }, 'receipt verification failed unexpectedly; the post is stored without receipt_verified');
      }
      return undefined;
    }
  }
}
