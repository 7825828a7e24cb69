import { mergeFeatureErrors, mergeFeatureRoutes } from './feature-contract.ts';
import { defineContract } from './route.ts';
import { systemFeatureContract } from './system/index.ts';
export * from './system/index.ts';
import { catalogFeatureContract } from './catalog/index.ts';
export * from './catalog/index.ts';
import { blackboardFeatureContract } from './blackboard/index.ts';
export * from './blackboard/index.ts';
import { identityFeatureContract } from './identity/index.ts';
export * from './identity/index.ts';
import { pdfFeatureContract } from './pdf/index.ts';
export * from './pdf/index.ts';
import { inferenceFeatureContract } from './inference/index.ts';
export * from './inference/index.ts';
import { billingFeatureContract, x402FeatureContract } from './billing/index.ts';
export * from './billing/index.ts';
import { receiptsFeatureContract } from './receipts/index.ts';
export * from './receipts/index.ts';
import { requestsFeatureContract } from './requests/index.ts';
export * from './requests/index.ts';
import { discoveryFeatureContract } from './discovery/index.ts';
export * from './discovery/index.ts';
import { jobsFeatureContract } from './jobs/index.ts';
export * from './jobs/index.ts';
import { responsesFeatureContract } from './responses/index.ts';
export * from './responses/index.ts';
import { mcpFeatureContract } from './mcp/index.ts';
export * from './mcp/index.ts';

/**
 * The contract list: one entry per feature (`<feature>/index.ts` defines it with
 * `defineFeatureContract`: its routes and the error codes only it raises), imported and
 * re-exported above (the re-export is how @svc/schemas exports the feature's schemas). The order
 * is the order of OpenAPI, the client, the MCP tools and the docs.
 */
const featureContracts = [
  systemFeatureContract,
  catalogFeatureContract,
  blackboardFeatureContract,
  identityFeatureContract,
  pdfFeatureContract,
  inferenceFeatureContract,
  billingFeatureContract,
  receiptsFeatureContract,
  requestsFeatureContract,
  discoveryFeatureContract,
  x402FeatureContract,
  jobsFeatureContract,
  responsesFeatureContract,
  mcpFeatureContract,
] as const;

/**
 * The whole API as data. Each top-level key is a feature's; its routes' key paths are the
 * operationIds, handler names, client methods and CLI command names.
 */
export const contract = defineContract(mergeFeatureRoutes(featureContracts));
export type Contract = typeof contract;

/** The codes the features declare, merged (a code two declare throws); `errorCodes` adds the platform's. */
export const featureErrorCodes = mergeFeatureErrors(featureContracts);
