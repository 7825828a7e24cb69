import { defineFeatureContract } from '../feature-contract.ts';
import { catalogContract } from './contract.ts';
import { catalogErrors } from './errors.ts';
export * from './values.ts';
export * from './records.ts';
export * from './contract.ts';
export * from './errors.ts';

/** The catalog and its verified downloads. One entry of the root contract list (`contract.ts`). */
export const catalogFeatureContract = defineFeatureContract({ routes: { catalog: catalogContract }, errors: catalogErrors });
