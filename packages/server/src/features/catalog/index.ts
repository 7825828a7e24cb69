import { QueryTypes } from 'sequelize';
import type { ServerDeps } from '../../deps.ts';
import type { Feature } from '../feature.ts';
import { ensureSigningKey, LocalObjectStore } from '../../storage/local-object-store.ts';
import type { ObjectStore } from '../../storage/object-store.ts';
import { CatalogService } from './catalog-service.ts';
import { demoCatalog } from './demo-catalog.ts';
import { Downloads } from './downloads.ts';
import { DOWNLOAD_COMPLETION, downloadCompletionLoader } from './download-receipts.ts';
import type { Receipts } from '../receipts/index.ts';
import { createCatalogHandlers } from './handlers.ts';
import { importCatalog } from './import-catalog.ts';
import type { RequestStore } from '../requests/index.ts';

export { importCatalog, parseJsonLines, CatalogImportError, type ImportResult } from './import-catalog.ts';
export type { CatalogService } from './catalog-service.ts';
export { searchArtifacts } from './search.ts';

/**
 * The object store the configuration asks for. The Google Cloud Storage and AWS clients are
 * imported only when configured: the first is about 16 MiB of resident memory (measured: importing it).
 */
export async function createObjectStore(deps: Pick<ServerDeps, 'config' | 'publicUrls'>): Promise<ObjectStore> {
  const { storage, dataDir } = deps.config;
  if (storage.kind === 'gcs') {
    const { GcsObjectStore } = await import('../../storage/gcs-object-store.ts');
    return new GcsObjectStore({ bucket: storage.bucket, storageOptions: storage.gcsProject ? { projectId: storage.gcsProject } : undefined });
  }
  if (storage.kind === 's3') {
    const { S3ObjectStore } = await import('../../storage/s3-object-store.ts');
    return new S3ObjectStore({ bucket: storage.bucket, ...storage.s3 });
  }
  return new LocalObjectStore({
    dataDir,
    bucket: storage.bucket,
    signingKey: await ensureSigningKey(storage.signingKey, dataDir),
    apiUrl: () => deps.publicUrls().apiUrl,
  });
}

/**
 * The catalog feature: handlers, the object store, the built-in embedding model in the model
 * registry, and the demo catalog on the first start of an empty database (embedded by default).
 */
export async function createCatalogFeature(
  deps: Pick<ServerDeps, 'config' | 'database' | 'log' | 'publicUrls'>,
  given: { receipts: Receipts; requests: RequestStore },
) {
  const { receipts, requests } = given;
  const store = await createObjectStore(deps);
  const catalog = new CatalogService(deps.database.sequelize);
  const downloads = new Downloads({
    sequelize: deps.database.sequelize,
    catalog,
    store,
    urlTtlSeconds: deps.config.storage.urlTtlSeconds,
    tokenTtlSeconds: deps.config.catalog.completionTokenTtlSeconds,
  });
  const demo = deps.config.catalog.demo;
  if (demo === 'on' || (demo === 'auto' && deps.database.kind === 'embedded')) {
    const [row] = await deps.database.sequelize.query<{ count: number }>('SELECT count(*)::int AS count FROM catalog_artifacts', { type: QueryTypes.SELECT });
    if (row?.count === 0) {
      const result = await importCatalog(
        { sequelize: deps.database.sequelize, store },
        demoCatalog().map((value, index) => ({ line: index + 1, value })),
      );
      deps.log.info(
        { artifacts: result.artifacts.created, files: result.files.created, hostedBytes: result.hostedBytes },
        'demo catalog loaded (SVC_CATALOG_DEMO=off to skip)',
      );
    }
  }
  receipts.registerRecordLoader(DOWNLOAD_COMPLETION, downloadCompletionLoader(deps.database.sequelize));
  return {
    handlers: { catalog: createCatalogHandlers({ catalog, downloads, store, receipts, requests }) },
    store,
    catalog,
    downloads,
  } satisfies Feature<'catalog'>;
}
