export { createClient, createContractClient, type SvcClient, type SvcClientOptions, type ClientOf, type ClientMethod } from './client.ts';
export { createPkcePair, pkceChallenge, type PkcePair } from './oauth/pkce.ts';
export { parseAuthorizationRedirect, OAuthFlowError, DEFAULT_LOOPBACK_REDIRECT, type OAuthHelpers, type AuthorizationResult } from './oauth/helpers.ts';
export { sessionFromTokens, type OAuthSession } from './oauth/session.ts';
export { Transport, resolveOptions, type ClientOptions, type CallOptions, type RetryOptions, type RawResult } from './transport.ts';
export * from './errors.ts';
export { readSse } from './sse.ts';
export { fillPath, toSearchParams } from './path.ts';
export { SVC_VERSION } from '@svc/schemas';
