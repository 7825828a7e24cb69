import { defineFeatureContract } from '../feature-contract.ts';
import { requestsContract } from './contract.ts';
import { requestsErrors } from './errors.ts';
export * from './records.ts';
export * from './contract.ts';
export * from './errors.ts';

/** Catalog requests. One entry of the root contract list (`contract.ts`). */
export const requestsFeatureContract = defineFeatureContract({ routes: { requests: requestsContract }, errors: requestsErrors });
