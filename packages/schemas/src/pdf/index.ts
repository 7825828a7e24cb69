import { defineFeatureContract } from '../feature-contract.ts';
import { documentsContract, pdfContract } from './contract.ts';
import { pdfErrors } from './errors.ts';
export * from './limits.ts';
export * from './extraction.ts';
export * from './documents.ts';
export * from './contract.ts';
export * from './errors.ts';

/** PDF and document extraction. One entry of the root contract list (`contract.ts`). */
export const pdfFeatureContract = defineFeatureContract({ routes: { pdf: pdfContract, documents: documentsContract }, errors: pdfErrors });
