export { createClient, createContractClient, type SvcClient, type ClientOf, type ClientMethod, type BlackboardHelpers } from './client.ts';
export { watchBlackboard, DEFAULT_WATCH_BACKOFF_MS, MIN_WATCH_DELAY_MS, type WatchOptions, type WatchFilters } from './blackboard/watch.ts';
export { Transport, resolveOptions, type ClientOptions, type CallOptions, type RetryOptions, type RawResult } from './transport.ts';
export * from './errors.ts';
export { readSse } from './sse.ts';
export { fillPath, toSearchParams } from './path.ts';
export { SVC_VERSION, deriveChannelKey, normaliseTask } from '@svc/schemas';
export type { BlackboardRecord, BlackboardReadPage, BlackboardPutResponse, BlackboardChannelsPage, ChannelSummary, PostingState } from '@svc/schemas';
export * from './catalog/index.ts';
