/**
 * `@svc/schemas/core`: the contract's building blocks without the contract itself (route
 * definitions and their helpers, paths, retries, paging, principals). A program that needs one
 * feature imports this and that feature's entry (`@svc/schemas/blackboard`) instead of the root,
 * which loads every feature's schemas (the CLI's start-up, issue 44).
 */
export * from './route.ts';
export * from './path.ts';
export * from './principal.ts';
export * from './feature-contract.ts';
export * from './retry.ts';
export * from './infer.ts';
export * from './query.ts';
export * from './cursor-list.ts';
export * from './cursor-paging.ts';
export * from './everyone-view.ts';
