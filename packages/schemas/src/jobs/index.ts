import { defineFeatureContract } from '../feature-contract.ts';
import { jobsContract } from './contract.ts';
import { jobsErrors } from './errors.ts';
export * from './limits.ts';
export * from './operations.ts';
export * from './records.ts';
export * from './contract.ts';
export * from './errors.ts';

/** Batch jobs. One entry of the root contract list (`contract.ts`). */
export const jobsFeatureContract = defineFeatureContract({ routes: { jobs: jobsContract }, errors: jobsErrors });
