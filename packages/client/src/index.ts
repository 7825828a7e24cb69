export { watchBlackboard, DEFAULT_WATCH_BACKOFF_MS, MIN_WATCH_DELAY_MS, type WatchOptions, type WatchFilters } from './blackboard/watch.ts';
export { watchChannelStream, DEFAULT_RECONNECT_MS, type ChannelStreamOptions } from './blackboard/channel-stream.ts';
export {
  createClient,
  createContractClient,
  type SvcClient,
  type SvcClientOptions,
  type ClientOf,
  type ClientMethod,
  type RawClientOf,
  type RawClientMethod,
  type ItemOf,
  type PagingMethods,
  type BlackboardHelpers,
} from './client.ts';
export { featureHelpers, type FeatureHelpers, type FeatureClient, type HelperContext } from './feature-helpers.ts';
// A named request and answer type for every operation (`BlackboardPutRequest`, `BlackboardPutResponse`, a list's `…Item`) and each feature's methods.
export type * from './operations.ts';
export { walkItems, walkPages, nextCursorOf, requestAfter, type ItemWalkOptions, type PageWalkOptions } from './paging.ts';
export { createPkcePair, pkceChallenge, type PkcePair } from './oauth/pkce.ts';
export { parseAuthorizationRedirect, OAuthFlowError, DEFAULT_LOOPBACK_REDIRECT, type OAuthHelpers, type AuthorizationResult } from './oauth/helpers.ts';
export { sessionFromTokens, type OAuthSession } from './oauth/session.ts';
export { Transport, resolveOptions, type ClientOptions, type CallOptions, type RetryOptions, type RawResult } from './transport.ts';
export * from './errors.ts';
export { readSse } from './sse.ts';
export { StreamIdleTimeoutError, DEFAULT_STREAM_IDLE_TIMEOUT_MS } from './stream-idle.ts';
export { fillPath, toSearchParams } from './path.ts';
export { SVC_VERSION, deriveChannelKey, normaliseTask } from '@svc/schemas';
export type { BlackboardRecord, BlackboardReadPage, BlackboardPutResponse, BlackboardChannelsPage, ChannelSummary, PostingState } from '@svc/schemas';
export * from './catalog/index.ts';
export type { PdfBounds, PdfHelpers, DocumentHelpers, PdfPageStream, StreamPagesOptions } from './pdf/pdf-helpers.ts';
export type { FileInput } from './pdf/pdf-input.ts';
export type { ChatCompletionsHelpers, ChatCompletionStream } from './inference/chat.ts';
export * from './receipts/index.ts';
export type { ReceiptClaims, JsonWebKeySet, ReceiptVerification } from '@svc/schemas';
export type { BillingHelpers, CreditChatHelpers, CreditChatOptions } from './billing/helpers.ts';
export type { JobsHelpers, SubmitJobOptions, WaitForJobOptions } from './jobs/jobs-helpers.ts';
