import { defineFeatureContract } from '../feature-contract.ts';
import { inferenceContract } from './contract.ts';
import { upstreamsContract } from './upstreams.ts';
import { inferenceErrors } from './errors.ts';
export * from './limits.ts';
export * from './usage.ts';
export * from './chat.ts';
export * from './embeddings.ts';
export * from './rerank.ts';
export * from './classify.ts';
export * from './summarize.ts';
export * from './rag.ts';
export * from './guidance.ts';
export * from './eval.ts';
export * from './speed-test.ts';
export * from './contract.ts';
export * from './response-cache.ts';
export * from './errors.ts';

/** Inference and its upstreams. One entry of the root contract list (`contract.ts`). */
export const inferenceFeatureContract = defineFeatureContract({
  routes: { inference: inferenceContract, upstreams: upstreamsContract },
  errors: inferenceErrors,
});
