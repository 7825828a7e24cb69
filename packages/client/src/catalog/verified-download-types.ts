import type { CompletionResponse, DownloadPlan } from '@svc/schemas';
import type { LocalFileState } from './local-files.ts';
import type { StoragePolicy } from './storage-policy.ts';

// What a verified download is asked (VerifiedDownloadOptions), reports (DownloadProgress) and answers (VerifiedFile, UpToDateFile).

export interface DownloadProgress {
  artifactId: string;
  path: string;
  receivedBytes: number;
  totalBytes: number;
}

export interface VerifiedDownloadOptions {
  artifactId: string;
  /** The file's path inside the artifact, as the download plan lists it. */
  path: string;
  /** Where the verified file is published (its directory is created). */
  destination: string;
  signal?: AbortSignal;
  onProgress?: (progress: DownloadProgress) => void;
  /** Loosens the strict storage host policy; merged with `SVC_STORAGE_HOSTS` and the client's `storagePolicy`. */
  policy?: StoragePolicy;
  /** A plan already fetched (downloadArtifact passes it); fetched when absent. */
  plan?: DownloadPlan;
  /** Runtime that selects the plan's files when the plan is fetched here. */
  tool?: DownloadPlan['tool'];
  /**
   * Directories this download creates are reported here instead of being removed on failure
   * (downloadArtifact shares directories between files and prunes them once all are done).
   */
  createdDirectories?: Set<string>;
  /**
   * Fetch the file even when the destination already holds the planned bytes, and start over
   * rather than resume a partial file (default false).
   */
  force?: boolean;
  /**
   * Compare a file already at the destination with the plan first, and answer an UpToDateFile
   * (nothing fetched, no completion) when its size and SHA-256 match (default false: a call
   * always fetches and attests; downloadArtifact skips by default). Ignored with `force`.
   */
  skipUpToDate?: boolean;
  /**
   * Fail with check `idle-timeout` (code `download_idle_timeout`) when the store sends nothing
   * this long, in ms; the partial is kept to resume. Default: the client's streamIdleTimeout (60 000).
   */
  streamIdleTimeout?: number;
  /**
   * Called once the destination has been compared with the plan (with `skipUpToDate`), before
   * anything is fetched: `up-to-date`, `missing`, or `differs` (the file there is replaced once
   * the new one is verified).
   */
  onLocalFile?: (check: { path: string; destination: string } & LocalFileState) => void;
}

export interface DownloadedFileFields {
  artifactId: string;
  revision: string;
  path: string;
  destination: string;
  sha256: string;
  sizeBytes: number;
}

/**
 * A file fetched, verified, attested and published. `outcome` says how: `fetched` whole, or
 * `resumed` (a partial file an interrupted run left was completed with a `Range` request, and
 * the whole file re-hashed).
 */
export interface VerifiedFile extends DownloadedFileFields {
  outcome: 'fetched' | 'resumed';
  /** Bytes this call took from the store: the whole file, or the rest of a partial one (0 when the partial was whole). */
  transferredBytes: number;
  completion: CompletionResponse;
}

/** A destination that already held the planned bytes: nothing was fetched and no pull recorded. */
export interface UpToDateFile extends DownloadedFileFields {
  outcome: 'up-to-date';
  transferredBytes: 0;
  completion: null;
}
