import type { JsonWebKeySet } from '@svc/schemas';
import { verifyReceipt, type VerifiedReceipt } from './verify-receipt.ts';

/** Helpers on `client.receipts` beside the contract's `jwks`. */
export interface ReceiptHelpers {
  /**
   * Verifies a receipt against this server's published keys (fetched now, or the `keys` given)
   * and its base URL as the issuer. The check itself runs locally.
   *
   * @example
   * ```ts
   * const { claims } = await svc.receipts.verify(file.completion.receipt);
   * ```
   */
  verify(receipt: string, options?: { keys?: JsonWebKeySet; issuer?: string }): Promise<VerifiedReceipt>;
}

export function receiptHelpers(jwks: () => Promise<JsonWebKeySet>, baseUrl: string): ReceiptHelpers {
  return {
    async verify(receipt, options = {}) {
      return verifyReceipt(receipt, { keys: options.keys ?? (await jwks()), issuer: options.issuer ?? baseUrl });
    },
  };
}
