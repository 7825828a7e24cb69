import type { ServerDeps } from '../../deps.ts';
import type { SigningKeys } from '../../signing-keys.ts';
import type { Receipts } from '../receipts/index.ts';
import type { Feature } from '../feature.ts';
import { developerKeyEventLoader } from './developer-key-receipts.ts';
import { DeveloperKeyService } from './developer-key-service.ts';
import { createCredentialsHandlers, createOAuthHandlers } from './handlers.ts';
import { OAuthService } from './oauth-service.ts';
import { OAuthTokens } from './oauth-tokens.ts';
import { accessTokenResolver, type CachedAccessToken, demoTokenResolver, developerKeyResolver } from './resolvers.ts';
import { KeyUsageBatch } from './key-usage-batch.ts';
import { KeyUsageReports } from './key-usage-report.ts';
import { CREDENTIALS_CHANNEL, CredentialCache } from './credential-cache.ts';
import { ChannelListener } from '../../db/notifications.ts';
import type { CachedKey } from './developer-key-resolver.ts';
import { ClientMetadataDocuments } from './client-metadata-documents.ts';
import { KeyWebhooks } from './key-webhooks.ts';

export { callerKey, principalKey } from './caller-key.ts';
export { addKeyUsage } from './key-usage.ts';
export { acceptsResource } from './resource-indicators.ts';
export type { KeyWebhookEndpoint, KeyWebhooks } from './key-webhooks.ts';

/** OAuth, developer keys and their resolvers: everything that says who a caller is. */
export async function createIdentityFeature(
  deps: Pick<ServerDeps, 'config' | 'database' | 'log' | 'publicUrls' | 'scheduler' | 'testSeams' | 'usage'>,
  given: { signingKeys: SigningKeys; receipts: Receipts },
) {
  const { config, database } = deps;
  // Verified credentials are kept in memory while this replica hears every change: on PostgreSQL
  // through LISTEN on a connection of its own; the embedded database has one replica, this one,
  // whose own changes empty its caches as they commit.
  const caches: CredentialCache<unknown>[] = [];
  const listener =
    database.kind === 'postgres' && config.databaseUrl && config.identity.credentialCacheTtlMs > 0
      ? new ChannelListener({
          url: config.databaseUrl,
          channel: CREDENTIALS_CHANNEL,
          onNotify: () => clearCaches(),
          onReset: () => clearCaches(),
          onError: (error) =>
            deps.log.warn({ err: error }, 'the credential-change listener lost its connection; cached credentials are not used until it is back'),
        })
      : undefined;
  const clearCaches = () => {
    for (const cache of caches) cache.clear();
  };
  const newCache = <T>() => {
    const cache = new CredentialCache<T>({
      ttlMs: config.identity.credentialCacheTtlMs,
      maxEntries: config.identity.credentialCacheMaxEntries,
      trusted: listener ? () => listener.listening : () => database.kind === 'embedded',
    });
    caches.push(cache as CredentialCache<unknown>);
    return cache;
  };
  const keyCache = newCache<CachedKey>();
  const tokenCache = newCache<CachedAccessToken>();
  await listener?.start();
  const usageBatch = new KeyUsageBatch(database.sequelize, {
    flushMs: config.identity.keyUsageFlushMs,
    flushCalls: config.identity.keyUsageFlushCalls,
    onError: (error) => deps.log.error({ err: error }, 'recording key usage failed'),
  });
  const tokens = new OAuthTokens(given.signingKeys, () => deps.publicUrls().baseUrl);
  const service = new OAuthService({
    tokens,
    sequelize: database.sequelize,
    config: config.identity,
    publicUrls: () => deps.publicUrls(),
    clientDocuments: new ClientMetadataDocuments(deps.testSeams?.clientMetadataFetch),
    revoked: clearCaches,
  });
  const developerKeys = new DeveloperKeyService(database.sequelize, {
    maxActive: config.identity.maxActiveDeveloperKeys,
    receipts: given.receipts,
    onError: (error) => deps.log.error({ err: error }, 'a key limit slot reservation failed'),
    cache: keyCache,
    flushUsage: () => usageBatch.flush(),
    onUsed: (credentialId) => usageBatch.used(credentialId),
  });
  given.receipts.registerRecordLoader('developer-key-event', developerKeyEventLoader(database.sequelize));
  // Spent ids and revoked families outlive nothing they record; prune them now and then.
  deps.scheduler.every('identity.prune', 10 * 60_000, () => service.store.prune());
  const stopKeyUsage = deps.usage.subscribe(usageBatch.listener);
  // A key's own webhook endpoint; the responses feature is given it to deliver to.
  const keyWebhooks = new KeyWebhooks(database.sequelize, deps.testSeams?.webhookFetch);
  return {
    close: async () => {
      stopKeyUsage();
      await usageBatch.close();
      await developerKeys.close();
      await listener?.close();
    },
    handlers: {
      oauth: createOAuthHandlers(deps, service),
      developerKeys: createCredentialsHandlers(developerKeys, new KeyUsageReports(database.sequelize, () => usageBatch.flush()), keyWebhooks),
    },
    keyWebhooks,
    resolvers: [
      accessTokenResolver(tokens, service.store, tokenCache),
      developerKeyResolver(developerKeys, config.limits.developerKey),
      ...(config.identity.demoToken ? [demoTokenResolver(config.identity.demoToken, config.identity.demoScopes)] : []),
    ],
  } satisfies Feature<'oauth' | 'developerKeys'>;
}
