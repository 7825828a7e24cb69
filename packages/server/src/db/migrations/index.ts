import foundation from './20261121T1200-foundation.ts';
import catalog from './20261121T1300-catalog.ts';
import blackboard from './20261121T1300-blackboard.ts';
import identity from './20261121T1300-identity.ts';
import walFlush from './20261121T1400-wal-flush.ts';
import blackboardRefuse from './20261121T1401-blackboard-refuse.ts';
import blackboardPutBatch from './20261121T1500-blackboard-put-batch.ts';
import billing from './20261122T1000-billing.ts';
import receipts from './20261122T1800-receipts.ts';
import catalogRequests from './20261122T1600-catalog-requests.ts';
import x402 from './20261122T1900-x402.ts';
import jobs from './20261122T1900-jobs.ts';
import completionRetry from './20261122T1900-completion-retry.ts';
import responses from './20261126T2300-responses.ts';
import responseCache from './20261127T0320-response-cache.ts';
import keyLimits from './20261127T0300-key-limits.ts';
import a2aTasks from './20261127T0310-a2a-tasks.ts';
import mcpCancelledCalls from './20261127T0400-mcp-cancelled-calls.ts';
import tasks from './20261207T0230-tasks.ts';
import type { Migration } from './types.ts';

/**
 * Every migration, listed here so a bundled build carries them all. Features add theirs;
 * the list is sorted by name (timestamp first), whatever order the imports are in.
 */
export const migrations: Migration[] = [
  foundation,
  catalog,
  blackboard,
  identity,
  walFlush,
  blackboardRefuse,
  blackboardPutBatch,
  catalogRequests,
  receipts,
  billing,
  x402,
  jobs,
  completionRetry,
  responses,
  a2aTasks,
  keyLimits,
  responseCache,
  mcpCancelledCalls,
  tasks,
].sort((a, b) => a.name.localeCompare(b.name));
