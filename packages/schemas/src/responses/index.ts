import { defineFeatureContract } from '../feature-contract.ts';
import { responsesContract } from './contract.ts';
import { responsesErrors } from './errors.ts';
export * from './limits.ts';
export * from './request.ts';
export * from './response.ts';
export * from './contract.ts';
export * from './webhook-deliveries.ts';
export * from './errors.ts';

/** The Responses API. One entry of the root contract list (`contract.ts`). */
export const responsesFeatureContract = defineFeatureContract({ routes: { responses: responsesContract }, errors: responsesErrors });
