import type { Transport } from '../transport.ts';
import type { DownloadArtifactOptions, DownloadArtifactResult } from './download-artifact.ts';
import type { CheckArtifactOptions, CheckArtifactResult } from './check-artifact.ts';
import type { UpToDateFile, VerifiedDownloadOptions, VerifiedFile } from './verified-download-types.ts';

export { VerifiedDownloadError, type DownloadCheck } from './download-error.ts';
export {
  checkStorageUrl,
  resolveStoragePolicy,
  loopbackServerStore,
  DEFAULT_STORAGE_HOST,
  type StoragePolicy,
  type ResolvedStoragePolicy,
} from './storage-policy.ts';
export type { VerifiedDownloadOptions, VerifiedFile, UpToDateFile, DownloadProgress } from './verified-download-types.ts';
export type { DownloadArtifactOptions, DownloadArtifactResult } from './download-artifact.ts';
export type { CheckArtifactOptions, CheckArtifactResult, CheckedFile } from './check-artifact.ts';
export type { LocalFileState } from './local-files.ts';

/** Helpers attached to `client.catalog` beside the contract's methods. */
export interface CatalogHelpers {
  /** One file, verified against the plan, attested, then published atomically; resumes a partial file an interrupted call left. */
  verifiedDownload(options: VerifiedDownloadOptions & { skipUpToDate?: false }): Promise<VerifiedFile>;
  /** With `skipUpToDate: true`, a destination that already holds the planned bytes answers an UpToDateFile and fetches nothing. */
  verifiedDownload(options: VerifiedDownloadOptions): Promise<VerifiedFile | UpToDateFile>;
  /** Every file of a plan (or the paths given), verified, with bounded concurrency; files already up to date are skipped, partial ones resumed. */
  downloadArtifact(options: DownloadArtifactOptions): Promise<DownloadArtifactResult>;
  /** Local files against the plan (up to date, missing, differs), fetching nothing. */
  checkArtifact(options: CheckArtifactOptions): Promise<CheckArtifactResult>;
}

/**
 * The download modules write files (node:fs, node:crypto, worker threads), so they load on
 * first use: importing `@svc/client` in a browser then loads no Node module at all.
 */
export function catalogHelpers(transport: Transport): CatalogHelpers {
  return {
    // The overloads narrow the answer by `skipUpToDate`; the function behind them answers either.
    verifiedDownload: (async (options: VerifiedDownloadOptions) =>
      (await import('./verified-download.ts')).verifiedDownload(transport, options)) as CatalogHelpers['verifiedDownload'],
    downloadArtifact: async (options) => (await import('./download-artifact.ts')).downloadArtifact(transport, options),
    checkArtifact: async (options) => (await import('./check-artifact.ts')).checkArtifact(transport, options),
  };
}
