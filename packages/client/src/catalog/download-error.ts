import { SvcError } from '../errors.ts';

/**
 * Which step of the verified download failed. Each names one check of the procedure, so a
 * caller can tell a hostile redirect (`storage-host`) from a corrupted body (`sha256`).
 */
export type DownloadCheck =
  | 'plan'
  | 'path'
  | 'redirect-status'
  | 'completion-token'
  | 'location'
  | 'storage-scheme'
  | 'storage-host'
  | 'storage-userinfo'
  | 'storage-fragment'
  | 'signed-url-field'
  | 'signed-url-expires'
  | 'fetch-status'
  | 'content-length'
  | 'size'
  | 'sha256'
  | 'completion'
  | 'write'
  | 'locked'
  | 'idle-timeout'
  | 'aborted';

/** A verified download refused: `check` says which check failed, `expected`/`actual` what it wanted and saw. */
export class VerifiedDownloadError extends SvcError {
  readonly check: DownloadCheck;
  readonly expected: string | undefined;
  readonly actual: string | undefined;
  readonly artifactId: string;
  readonly path: string;

  constructor(init: {
    check: DownloadCheck;
    message: string;
    artifactId: string;
    path: string;
    expected?: string;
    actual?: string;
    cause?: unknown;
    status?: number;
    requestId?: string;
  }) {
    super(
      `${init.artifactId}/${init.path}: ${init.check} check failed: ${init.message}${init.expected !== undefined ? ` (expected ${init.expected}${init.actual !== undefined ? `, got ${init.actual}` : ''})` : ''}. Nothing was published and no completion was posted.`,
      {
        code: `download_${init.check.replace(/-/g, '_')}`,
        cause: init.cause,
        status: init.status,
        requestId: init.requestId,
      },
    );
    this.check = init.check;
    this.expected = init.expected;
    this.actual = init.actual;
    this.artifactId = init.artifactId;
    this.path = init.path;
  }
}
