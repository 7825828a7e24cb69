import {
  catalogContract,
  artifactTypes,
  licenses,
  hostings,
  sources,
  tools,
  reviewStatuses,
  searchSorts,
  trendingWindows,
  packs,
  rankingSlugs,
  walkContract,
  toOpenApiPath,
} from '@svc/schemas';
import { defineHandlers } from '../../http/handler-types.ts';
import { ServiceError } from '../../service-error.ts';
import { HASHED_EMBEDDING_MODEL } from '../../inference/hashed-embeddings.ts';
import type { ObjectStore, ServingObjectStore } from '../../storage/object-store.ts';
import { LOCAL_ACCESS_ID, type LocalObjectStore } from '../../storage/local-object-store.ts';
import { parseByteRange } from '../../storage/byte-range.ts';
import { verifyV4Url } from '../../storage/v4-signing.ts';
import { callerKey } from '../identity/index.ts';
import type { CatalogService } from './catalog-service.ts';
import { toArtifactFile } from './catalog-service.ts';
import type { Downloads } from './downloads.ts';
import { downloadCompletionRecord } from './download-receipts.ts';
import type { Receipts } from '../receipts/index.ts';
import type { FiledRequest, RequestStore } from '../requests/index.ts';
import { checkFilePath } from './file-paths.ts';
import { searchArtifacts } from './search.ts';

/** `GET /api/artifacts/{id}/download-plan`, as documents write a route: from its contract entry. */
const planRoute = `${catalogContract.downloadPlan.method} ${toOpenApiPath(catalogContract.downloadPlan.path)}`;

export const DOWNLOAD_PROCEDURE = [
  `${planRoute}: note each file's path, sha256 and sizeBytes.`,
  "GET the file's downloadUrl WITHOUT following redirects; anything but 302 is a failure.",
  'Require the X-Svc-Completion-Token header.',
  'Require the Location to be HTTPS on the object-storage host family (storage.googleapis.com or an explicitly allowed host), with no user:password and no #fragment.',
  'Require x-goog-algorithm, x-goog-credential, x-goog-date, x-goog-signature and generation in its query, and x-goog-expires in 1..300 (an S3 store signs the X-Amz-* equivalents, with X-Amz-Expires in 1..300).',
  "The store's answer must name the signed generation: GCS's x-goog-generation, or on S3 the ETag (without its quotes).",
  'GET the Location expecting 200; a declared Content-Length must equal sizeBytes; stop as soon as more than sizeBytes arrive.',
  'Hash (SHA-256) while writing to a temporary file beside the destination; compare digest and size with the plan.',
  'Only then POST { sha256, sizeBytes, completionToken } to the completionUrl; only when it succeeds, rename the file into place.',
  'On any failure delete the temporary file and post nothing. Probes, HEAD requests and partial reads never count as pulls.',
];

/** The api surface's camelCase receipt of a request filed in the shared store. */
function apiReceipt(kind: 'mirror' | 'source', { receipt, replayed }: FiledRequest) {
  return {
    id: receipt.request_id,
    kind,
    status: receipt.status,
    artifactId: receipt.artifact_id,
    createdAt: receipt.created_at,
    duplicate: replayed,
    statusUrl: receipt.status_url,
  };
}

export interface CatalogHandlerDeps {
  catalog: CatalogService;
  /** Mirror and source requests file into the catalog request store (the /v1 routes read them). */
  requests: RequestStore;
  downloads: Downloads;
  store: ObjectStore;
  receipts: Receipts;
}

function isServing(store: ObjectStore): store is ServingObjectStore & LocalObjectStore {
  return store.kind === 'local';
}

export function createCatalogHandlers({ catalog, downloads, store, receipts, requests }: CatalogHandlerDeps) {
  return defineHandlers(catalogContract, {
    async agentDiscovery(_input, request) {
      return {
        status: 200,
        body: {
          schema: 'svc.catalog.discovery.v1',
          apiUrl: request.publicUrl,
          endpoints: walkContract(catalogContract).map(({ route }) => ({ method: route.method, path: toOpenApiPath(route.path), summary: route.summary })),
          values: {
            sort: [...searchSorts],
            type: [...artifactTypes],
            license: [...licenses],
            hosting: [...hostings],
            source: [...sources],
            worksWith: [...tools],
            tool: [...tools],
            reviewStatus: [...reviewStatuses],
            window: [...trendingWindows],
            pack: [...packs],
            rankings: [...rankingSlugs],
          },
          downloadProcedure: DOWNLOAD_PROCEDURE,
          storageHosts: store.hosts(),
          embeddingModel: HASHED_EMBEDDING_MODEL,
        },
      };
    },
    async search({ query }, request) {
      const body = await request.timing.measure('search', () => searchArtifacts(catalog.sequelize, query));
      return { status: 200, body };
    },
    async resolve({ query }, request) {
      return { status: 200, body: await catalog.resolve(query.repo, query.source, request.publicUrl) };
    },
    async artifact({ params }, request) {
      return { status: 200, body: await catalog.artifact(params.id, request.publicUrl) };
    },
    async metadata({ params }, request) {
      const artifact = await catalog.artifact(params.id, request.publicUrl);
      const [versions, files, reviewSummary] = await Promise.all([
        catalog.versions(params.id),
        catalog.latestFiles(params.id),
        catalog.reviewSummary(params.id),
      ]);
      return {
        status: 200,
        body: { schema: 'svc.catalog.artifact.v1', artifact, versions: versions.rows, files: files.rows.map(toArtifactFile), reviewSummary },
      };
    },
    async agentBundle({ params }, request) {
      const artifact = await catalog.summary(params.id);
      const plan = await catalog.plan(params.id, undefined, request.publicUrl).catch((error: unknown) => {
        if (error instanceof ServiceError && error.code === 'no_hosted_files') return null;
        throw error;
      });
      const [trust, reviewSummary] = await Promise.all([catalog.trustBundles(params.id), catalog.reviewSummary(params.id)]);
      const { description: _description, homepage: _homepage, ...summary } = artifact;
      return {
        status: 200,
        body: {
          schema: 'svc.catalog.agent-bundle.v1',
          artifact: summary,
          plan,
          trust: { bundles: trust.rows.length, consistent: trust.consistent, reviewStatus: artifact.reviewStatus },
          reviewSummary,
          instructions: plan ? DOWNLOAD_PROCEDURE : ['Nothing is hosted here for this artifact; fetch it from its source or POST a mirror request.'],
          cli: plan ? `svc download ${params.id} --out ./${params.id}` : `svc artifact show ${params.id}`,
        },
      };
    },
    async versions({ params }) {
      return { status: 200, body: await catalog.versions(params.id) };
    },
    async files({ params, query }) {
      return { status: 200, body: await catalog.files(params.id, query) };
    },
    async downloadPlan({ params, query }, request) {
      return { status: 200, body: await catalog.plan(params.id, query.tool, request.publicUrl) };
    },
    async download({ params }, request) {
      const path = checkFilePath(params.path);
      // HEAD is a probe: same answer, but no completion token is issued or stored.
      const started: { location: string; token?: string; file: { sha256: string; size_bytes: string | number } } =
        request.method === 'HEAD' ? await downloads.probe(params.id, path) : await downloads.start(params.id, path, callerKey(request));
      return {
        status: 302,
        headers: {
          location: started.location,
          ...(started.token ? { 'x-svc-completion-token': started.token } : {}),
          'x-svc-sha256': started.file.sha256,
          'x-svc-size-bytes': String(started.file.size_bytes),
          'cache-control': 'no-store',
        },
      };
    },
    async completeDownload({ params, body }) {
      const path = checkFilePath(params.path);
      const completion = await downloads.complete(params.id, path, body);
      return { status: 200, body: { ...completion, receipt: await receipts.sign(downloadCompletionRecord(completion)) } };
    },
    async trustBundles({ params }) {
      return { status: 200, body: await catalog.trustBundles(params.id) };
    },
    async reviews({ params, query }) {
      return { status: 200, body: await catalog.reviews(params.id, query.limit) };
    },
    async reviewSummary({ params }) {
      return { status: 200, body: await catalog.reviewSummary(params.id) };
    },
    async downloadableFiles({ query }) {
      return { status: 200, body: await catalog.downloadableFiles(query) };
    },
    async rankings({ params, query }) {
      return { status: 200, body: await catalog.ranking(params.slug, query.limit) };
    },
    async trending({ query }) {
      return { status: 200, body: await catalog.trending(query.window, query.limit) };
    },
    async mirrorRequest({ params, body }, request) {
      await catalog.summary(params.id);
      const filed = await requests.file(
        callerKey(request),
        'mirror',
        { artifact_id: params.id, use_case: body.useCase, target_tool: body.targetTool },
        'catalog_api',
      );
      request.log.info({ catalogRequestId: filed.receipt.request_id, artifactId: params.id }, 'mirror request received');
      return { status: 202, body: apiReceipt('mirror', filed) };
    },
    async sourceRequest({ body }, request) {
      const filed = await requests.file(
        callerKey(request),
        'source',
        { repo: body.repo, source: body.source, use_case: body.useCase, target_tool: body.targetTool },
        'catalog_api',
      );
      return { status: 202, body: apiReceipt('source', filed) };
    },
    async storageObject({ params, query }, request) {
      if (!isServing(store) || params.bucket !== store.bucket) throw new ServiceError('object_not_found', "No such bucket in this server's object store.");
      const host = String(request.headers.host ?? '');
      const problem = verifyV4Url({ key: store.key, accessId: LOCAL_ACCESS_ID, bucket: params.bucket, objectKey: params.key, host, query });
      if (problem) throw new ServiceError(problem.code, problem.message);
      const stored = await store.stat(params.key);
      if (!stored) throw new ServiceError('object_not_found', 'No such object.');
      const etag = `"${stored.generation}"`;
      // If-Range names the copy the client holds part of: another one gets the whole object (200).
      const ifRange = request.headers['if-range'];
      const rangeHeader = ifRange === undefined || ifRange === etag ? String(request.headers.range ?? '') || undefined : undefined;
      const range = stored.generation === query.generation ? parseByteRange(rangeHeader, stored.sizeBytes) : undefined;
      if (range === 'unsatisfiable')
        throw new ServiceError('range_not_satisfiable', `The range ${rangeHeader} starts past the last byte of this ${stored.sizeBytes}-byte object.`, {
          headers: { 'content-range': `bytes */${stored.sizeBytes}`, 'accept-ranges': 'bytes', etag },
        });
      const opened = await store.open(params.key, range);
      if (!opened) throw new ServiceError('object_not_found', 'No such object.');
      if (opened.object.generation !== query.generation) {
        opened.stream.destroy();
        throw new ServiceError(
          'object_not_found',
          `Generation ${query.generation} of this object is gone (current generation differs); ask for a fresh download URL.`,
        );
      }
      const headers = {
        'x-goog-generation': opened.object.generation,
        'cache-control': 'private, no-store',
        'accept-ranges': 'bytes',
        etag,
      };
      if (range)
        return {
          status: 206,
          headers: {
            ...headers,
            'content-length': String(range.end - range.start + 1),
            'content-range': `bytes ${range.start}-${range.end}/${opened.object.sizeBytes}`,
          },
          body: opened.stream,
        };
      return { status: 200, headers: { ...headers, 'content-length': String(opened.object.sizeBytes) }, body: opened.stream };
    },
  });
}
