/**
 * The few server internals that tests and benches outside the server reach past the HTTP
 * interface for: seeding credits without a payment provider, opening a database to fill it in
 * bulk, the developer-key resolver and limiter measured in process (bench/http-overhead), the built-in embedder measured in process, and the bench protocol the server publishes.
 * They are reached here, in one place, rather than by relative paths from every package
 * (@svc/server's published exports do not include them).
 */
export { grantCredits } from '../../server/src/features/billing/credit-ledger.ts';
export { openDatabase } from '../../server/src/db/database.ts';
export { runMigrations } from '../../server/src/db/migrate.ts';
export { KeyLimiter } from '../../server/src/http/key-limits.ts';
export { DeveloperKeyService } from '../../server/src/features/identity/developer-key-service.ts';
export { developerKeyResolver } from '../../server/src/features/identity/resolvers.ts';
export { newDeveloperKey } from '../../server/src/features/identity/developer-key-format.ts';
export { embedText } from '../../server/src/inference/hashed-embeddings.ts';
export { performanceProtocol } from '../../server/src/features/system/documents.ts';
export { importCatalog, createObjectStore } from '../../server/src/features/catalog/index.ts';
