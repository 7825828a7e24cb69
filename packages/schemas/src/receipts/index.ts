import { defineFeatureContract } from '../feature-contract.ts';
import { receiptsContract } from './contract.ts';
export * from './records.ts';
export * from './contract.ts';

/** Receipts (no codes of their own). One entry of the root contract list (`contract.ts`). */
export const receiptsFeatureContract = defineFeatureContract({ routes: { receipts: receiptsContract } });
