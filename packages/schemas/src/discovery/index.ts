import { defineFeatureContract } from '../feature-contract.ts';
import { discoveryContract } from './contract.ts';
import { discoveryErrors } from './errors.ts';
export * from './a2a-card.ts';
export * from './a2a-rpc.ts';
export * from './a2a-skills.ts';
export * from './contract.ts';
export * from './mcp-server-card.ts';
export * from './urls.ts';
export * from './try.ts';
export * from './errors.ts';

/** Discovery documents and A2A. One entry of the root contract list (`contract.ts`). */
export const discoveryFeatureContract = defineFeatureContract({ routes: { discovery: discoveryContract }, errors: discoveryErrors });
