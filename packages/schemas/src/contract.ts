import { defineContract } from './route.ts';
import { catalogContract } from './catalog/contract.ts';
import { blackboardContract } from './blackboard/contract.ts';
import { credentialsContract, oauthContract } from './identity/contract.ts';
import { discoveryContract } from './discovery/contract.ts';
import { documentsContract, pdfContract } from './pdf/contract.ts';
import { modelsContract, systemContract } from './system/contract.ts';
import { inferenceContract } from './inference/contract.ts';
import { upstreamsContract } from './inference/upstreams.ts';
import { billingContract, creditsContract } from './billing/contract.ts';
import { receiptsContract } from './receipts/contract.ts';
import { requestsContract } from './requests/contract.ts';
import { x402Contract } from './billing/x402-contract.ts';
import { jobsContract } from './jobs/contract.ts';
import { responsesContract } from './responses/contract.ts';
import { mcpContract } from './mcp/contract.ts';

/**
 * The whole API as data. Each top-level key is a feature; its routes' key paths are the
 * operationIds, handler names, client methods and CLI command names.
 */
export const contract = defineContract({
  system: systemContract,
  models: modelsContract,
  catalog: catalogContract,
  blackboard: blackboardContract,
  oauth: oauthContract,
  credentials: credentialsContract,
  pdf: pdfContract,
  documents: documentsContract,
  inference: inferenceContract,
  upstreams: upstreamsContract,
  billing: billingContract,
  credits: creditsContract,
  receipts: receiptsContract,
  requests: requestsContract,
  discovery: discoveryContract,
  x402: x402Contract,
  jobs: jobsContract,
  responses: responsesContract,
  mcp: mcpContract,
});
export type Contract = typeof contract;
