import { receiptsContract } from '@svc/schemas';
import type { ServerDeps } from '../../deps.ts';
import { defineHandlers } from '../../http/handler-types.ts';
import type { SigningKeys } from '../../signing-keys.ts';
import type { Feature } from '../feature.ts';
import { ReceiptKeyStore } from './receipt-key-store.ts';
import { deriveReceiptSigningKey } from './receipt-keys.ts';
import { Receipts } from './receipts.ts';

export { Receipts, type ReceiptRecord, type RecordLoader } from './receipts.ts';

/**
 * The receipts feature: this replica's signing key (derived from the shared signing secret and
 * published in the database), the `Receipts` other features sign with, and the JWKS route.
 */
export async function createReceiptsFeature(deps: Pick<ServerDeps, 'config' | 'database' | 'log' | 'publicUrls'>, signingKeys: SigningKeys) {
  const key = await deriveReceiptSigningKey(signingKeys, deps.config.identity.receiptKeyGeneration);
  const store = new ReceiptKeyStore(deps.database.sequelize);
  await store.publish(key.publicJwk);
  const receipts = new Receipts({ key, store, issuer: () => deps.publicUrls().baseUrl, log: deps.log });
  const handlers = defineHandlers(receiptsContract, {
    async jwks() {
      // Short-lived caching: a verifier that meets an unknown kid (a key rotated in since) fetches again.
      return { status: 200, headers: { 'cache-control': 'public, max-age=60' }, body: await receipts.keySet() };
    },
  });
  return { handlers: { receipts: handlers }, receipts } satisfies Feature<'receipts'>;
}
