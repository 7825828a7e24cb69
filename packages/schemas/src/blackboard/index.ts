import { defineFeatureContract } from '../feature-contract.ts';
import { blackboardContract } from './contract.ts';
import { blackboardErrors } from './errors.ts';
export * from './limits.ts';
export * from './channel-key.ts';
export * from './fields.ts';
export * from './records.ts';
export * from './requests.ts';
export * from './mcp.ts';
export * from './watch.ts';
export * from './contract.ts';
export * from './errors.ts';

/** The blackboard. One entry of the root contract list (`contract.ts`). */
export const blackboardFeatureContract = defineFeatureContract({ routes: { blackboard: blackboardContract }, errors: blackboardErrors });
