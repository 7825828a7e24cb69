import type { ServerDeps } from '../../deps.ts';
import type { SigningKeys } from '../../signing-keys.ts';
import type { Receipts } from '../receipts/index.ts';
import type { Feature } from '../feature.ts';
import { developerKeyEventLoader } from './developer-key-receipts.ts';
import { DeveloperKeyService } from './developer-key-service.ts';
import { createCredentialsHandlers, createOAuthHandlers } from './handlers.ts';
import { OAuthService } from './oauth-service.ts';
import { OAuthTokens } from './oauth-tokens.ts';
import { accessTokenResolver, demoTokenResolver, developerKeyResolver } from './resolvers.ts';
import { keyUsageListener } from './key-usage.ts';
import { ClientMetadataDocuments } from './client-metadata-documents.ts';

export { callerKey, principalKey } from './caller-key.ts';
export { addKeyUsage } from './key-usage.ts';
export { acceptsResource } from './resource-indicators.ts';

/** OAuth, developer keys and their resolvers: everything that says who a caller is. */
export async function createIdentityFeature(deps: ServerDeps, given: { signingKeys: SigningKeys; receipts: Receipts }) {
  const { config, database } = deps;
  const tokens = new OAuthTokens(given.signingKeys, () => deps.publicUrls().baseUrl);
  const service = new OAuthService({
    tokens,
    sequelize: database.sequelize,
    config: config.identity,
    publicUrls: () => deps.publicUrls(),
    clientDocuments: new ClientMetadataDocuments(deps.testSeams?.clientMetadataFetch),
  });
  const developerKeys = new DeveloperKeyService(database.sequelize, {
    maxActive: config.identity.maxActiveDeveloperKeys,
    receipts: given.receipts,
    onError: (error) => deps.log.error({ err: error }, 'a key limit slot reservation failed'),
  });
  given.receipts.registerRecordLoader('developer-key-event', developerKeyEventLoader(database.sequelize));
  // Spent ids and revoked families outlive nothing they record; prune them now and then.
  deps.scheduler.every('identity.prune', 10 * 60_000, () => service.store.prune());
  const stopKeyUsage = deps.usage.subscribe(keyUsageListener(database.sequelize, (error) => deps.log.error({ err: error }, 'recording key usage failed')));
  return {
    close: async () => {
      stopKeyUsage();
      await developerKeys.close();
    },
    handlers: { oauth: createOAuthHandlers(deps, service), credentials: createCredentialsHandlers(developerKeys) },
    resolvers: [
      accessTokenResolver(tokens, service.store),
      developerKeyResolver(developerKeys, config.limits.developerKey),
      ...(config.identity.demoToken ? [demoTokenResolver(config.identity.demoToken, config.identity.demoScopes)] : []),
    ],
  } satisfies Feature<'oauth' | 'credentials'>;
}
