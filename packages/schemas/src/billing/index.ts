import { defineFeatureContract } from '../feature-contract.ts';
import { billingContract, creditsContract } from './contract.ts';
import { billingErrors, x402Errors } from './errors.ts';
import { x402Contract } from './x402-contract.ts';
export * from './packs.ts';
export * from './records.ts';
export * from './contract.ts';
export * from './x402.ts';
export * from './x402-contract.ts';
export * from './errors.ts';

/** Billing and credits. One entry of the root contract list (`contract.ts`). */
export const billingFeatureContract = defineFeatureContract({ routes: { billing: billingContract, credits: creditsContract }, errors: billingErrors });

/** x402 pay-per-call, its own entry so the root keeps its place in the contract's order. */
export const x402FeatureContract = defineFeatureContract({ routes: { x402: x402Contract }, errors: x402Errors });
