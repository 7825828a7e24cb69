import { defineFeatureContract } from '../feature-contract.ts';
import { mcpContract } from './contract.ts';
import { mcpErrors } from './errors.ts';
export * from './contract.ts';
export * from './batch-rules.ts';
export * from './errors.ts';

/** The MCP endpoint. One entry of the root contract list (`contract.ts`). */
export const mcpFeatureContract = defineFeatureContract({ routes: { mcp: mcpContract }, errors: mcpErrors });
