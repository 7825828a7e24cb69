import { defineFeatureContract } from '../feature-contract.ts';
import { modelsContract, systemContract } from './contract.ts';
export * from './documents.ts';
export * from './models.ts';
export * from './contract.ts';
export * from './console.ts';

/** The status, version, documents and model list routes (no codes of their own). One entry of the root contract list (`contract.ts`). */
export const systemFeatureContract = defineFeatureContract({ routes: { system: systemContract, models: modelsContract } });
