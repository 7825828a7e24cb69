import type { Transport } from '../transport.ts';
import type { DownloadArtifactOptions, DownloadArtifactResult } from './download-artifact.ts';
import type { VerifiedDownloadOptions, VerifiedFile } from './verified-download.ts';

export { VerifiedDownloadError, type DownloadCheck } from './download-error.ts';
export {
  checkStorageUrl,
  resolveStoragePolicy,
  loopbackServerStore,
  DEFAULT_STORAGE_HOST,
  type StoragePolicy,
  type ResolvedStoragePolicy,
} from './storage-policy.ts';
export type { VerifiedDownloadOptions, VerifiedFile, DownloadProgress } from './verified-download.ts';
export type { DownloadArtifactOptions, DownloadArtifactResult } from './download-artifact.ts';

/** Helpers attached to `client.catalog` beside the contract's methods. */
export interface CatalogHelpers {
  /** One file, verified against the plan, attested, then published atomically. */
  verifiedDownload(options: VerifiedDownloadOptions): Promise<VerifiedFile>;
  /** Every file of a plan (or the paths given), verified, with bounded concurrency. */
  downloadArtifact(options: DownloadArtifactOptions): Promise<DownloadArtifactResult>;
}

/**
 * The download modules write files (node:fs, node:crypto, worker threads), so they load on
 * first use: importing `@svc/client` in a browser then loads no Node module at all.
 */
export function catalogHelpers(transport: Transport): CatalogHelpers {
  return {
    verifiedDownload: async (options) => (await import('./verified-download.ts')).verifiedDownload(transport, options),
    downloadArtifact: async (options) => (await import('./download-artifact.ts')).downloadArtifact(transport, options),
  };
}
