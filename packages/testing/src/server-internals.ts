/**
 * The few server internals that tests and benches outside the server reach past the HTTP
 * interface for: seeding credits without a payment provider, opening a database to fill it in
 * bulk, the built-in embedder measured in process, and the bench protocol the server publishes.
 * They are reached here, in one place, rather than by relative paths from every package
 * (@svc/server's published exports do not include them).
 */
export { grantCredits } from '../../server/src/features/billing/credit-ledger.ts';
export { openDatabase } from '../../server/src/db/database.ts';
export { embedText } from '../../server/src/inference/hashed-embeddings.ts';
export { performanceProtocol } from '../../server/src/features/system/documents.ts';
