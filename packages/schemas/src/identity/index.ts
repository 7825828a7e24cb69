import { defineFeatureContract } from '../feature-contract.ts';
import { developerKeysContract, oauthContract } from './contract.ts';
import { identityErrors } from './errors.ts';
export * from './oauth.ts';
export * from './credentials.ts';
export * from './key-limits.ts';
export * from './usage-report.ts';
export * from './key-webhook.ts';
export * from './contract.ts';
export * from './errors.ts';

/** OAuth and developer keys (`developerKeys`; `credentials` until 0.x, kept as an alias: former-names.ts). One entry of the root contract list (`contract.ts`). */
export const identityFeatureContract = defineFeatureContract({
  routes: { oauth: oauthContract, developerKeys: developerKeysContract },
  errors: identityErrors,
});
