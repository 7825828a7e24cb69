import { contract, type Contract } from '@svc/schemas';
import { createBlackboardHelpers } from './blackboard/helpers.ts';
import { catalogHelpers } from './catalog/index.ts';
import { createContractClient, type ClientOf } from './derive.ts';
import { createOAuthHelpers, type OAuthHelpers } from './oauth/helpers.ts';
import { createDocumentHelpers, createPdfHelpers } from './pdf/pdf-helpers.ts';
import { receiptHelpers } from './receipts/helpers.ts';
import { createBillingHelpers, createCreditsHelpers } from './billing/helpers.ts';
import { createJobsHelpers } from './jobs/jobs-helpers.ts';
import type { ContractMethods } from './operations.ts';
import { Transport, type ResolvedOptions } from './transport.ts';

/** What a feature's helpers are built from: the derived methods and the transport under them. */
export interface HelperContext {
  readonly methods: ClientOf<Contract>;
  readonly transport: Transport;
}

type HelperFactories = { readonly [Feature in keyof Contract]?: (context: HelperContext) => object };

/** OAuth's token endpoint gets a transport of its own: it carries no bearer and never refreshes. */
export function oauthHelpersFor(options: ResolvedOptions): OAuthHelpers {
  const transport = new Transport({ ...options, token: undefined, onUnauthorized: undefined });
  return createOAuthHelpers(createContractClient(contract, transport).methods.oauth, options.baseUrl);
}

/**
 * The one registry of helpers beyond the derived methods: one line per feature, each built by
 * its own module. `SvcClient`'s type follows from this object, so adding a line is all it takes.
 */
export const featureHelpers = {
  blackboard: ({ methods }) => createBlackboardHelpers(methods.blackboard),
  catalog: ({ transport }) => catalogHelpers(transport),
  oauth: ({ transport }) => oauthHelpersFor(transport.options),
  pdf: ({ methods }) => createPdfHelpers(methods),
  documents: ({ methods }) => createDocumentHelpers(methods),
  receipts: ({ methods, transport }) => receiptHelpers(() => methods.receipts.jwks(), transport.options.baseUrl),
  billing: ({ methods }) => createBillingHelpers(methods),
  credits: ({ methods }) => createCreditsHelpers(methods),
  // `submit` replaces the derived method (it takes the request and an optional key); the derived one stays on `withResponse`.
  jobs: ({ methods }) => createJobsHelpers({ ...methods.jobs }),
} satisfies HelperFactories;

/** Each feature's helpers, by feature name. */
export type FeatureHelpers = { [Feature in keyof typeof featureHelpers]: ReturnType<(typeof featureHelpers)[Feature]> };

/**
 * A feature's methods and its registered helpers, as one object. The methods are declared with
 * named request and answer types (`operations.ts`, written from the contract), so a hover shows
 * `Promise<BlackboardPutResponse>` rather than the route's schemas spelled out.
 */
export type FeatureClient<Feature extends keyof Contract> = (Feature extends keyof ContractMethods ? ContractMethods[Feature] : ClientOf<Contract>[Feature]) &
  (Feature extends keyof FeatureHelpers ? FeatureHelpers[Feature] : unknown);

/** Attaches every registered feature's helpers to its branch of the derived methods. */
export function attachFeatureHelpers(context: HelperContext): void {
  for (const [feature, build] of Object.entries(featureHelpers) as Array<[keyof Contract, (context: HelperContext) => object]>) {
    Object.assign(context.methods[feature], build(context));
  }
}
