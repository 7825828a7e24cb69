/**
 * `@svc/client/core`: the transport, the errors and the contract walker without the contract
 * (`@svc/client` loads every feature's schemas). With a feature's entry (`@svc/client/blackboard`)
 * it is what a short-lived program such as the CLI loads to start fast (issue 44).
 */
export { Transport, resolveOptions, type ClientOptions, type CallOptions, type RetryOptions, type RawResult } from './transport.ts';
export { createContractClient, type ClientMethod, type ClientOf, type RawClientMethod, type RawClientOf } from './derive.ts';
export * from './errors.ts';
