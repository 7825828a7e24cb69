import { readdir, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { catalogContract, type DownloadPlan } from '@svc/schemas';
import type { Transport } from '../transport.ts';
import { VerifiedDownloadError } from './download-error.ts';
import type { StoragePolicy } from './storage-policy.ts';
import { isSafeRelativePath } from './safe-path.ts';
import { verifiedDownload } from './verified-download.ts';
import type { DownloadProgress, UpToDateFile, VerifiedDownloadOptions, VerifiedFile } from './verified-download-types.ts';

export interface DownloadArtifactOptions {
  artifactId: string;
  /** Directory receiving the files under their plan paths. */
  destination: string;
  /** Only these plan paths (default: every file of the plan). */
  paths?: string[];
  tool?: DownloadPlan['tool'];
  /** Files fetched at once (default 4). */
  concurrency?: number;
  signal?: AbortSignal;
  policy?: StoragePolicy;
  onProgress?: (progress: DownloadProgress) => void;
  /**
   * Fetch every file again, even one already at its destination with the planned digest, and
   * start over rather than resume partial files (default false).
   */
  force?: boolean;
  /** Called once per file when its download starts, with the plan entry. */
  onFileStart?: (file: DownloadPlan['files'][number]) => void;
  /** Called once per file already at its destination, before anything is fetched for it (see VerifiedDownloadOptions.onLocalFile). */
  onLocalFile?: VerifiedDownloadOptions['onLocalFile'];
  onFileDone?: (result: { path: string; file?: VerifiedFile | UpToDateFile; error?: Error }) => void;
}

export interface DownloadArtifactResult {
  artifactId: string;
  revision: string;
  /** Every requested file is at its destination with the planned digest: fetched now, or already there. */
  ok: boolean;
  /** Files fetched (whole or resumed), verified, attested and published by this call. */
  files: VerifiedFile[];
  /** Files whose destination already held the planned bytes: nothing fetched, no pull recorded. */
  upToDate: UpToDateFile[];
  failures: Array<{ path: string; error: Error }>;
}

/**
 * Verified download of every file of a plan (or the paths asked for), a few at a time. A file
 * that fails does not stop the others; the result lists each, and `ok` is false if any failed.
 * A file already at its destination with the planned size and SHA-256 is skipped (`upToDate`),
 * and a partial file an interrupted run left is resumed; `force` fetches everything again.
 *
 * @example
 * ```ts
 * const result = await svc.catalog.downloadArtifact({ artifactId: 'prompt-injection-rules', destination: './rules' });
 * if (!result.ok) for (const failure of result.failures) console.error(failure.error.message);
 * ```
 */
export async function downloadArtifact(transport: Transport, options: DownloadArtifactOptions): Promise<DownloadArtifactResult> {
  const { plan, wanted } = await planFor(transport, options);
  const failures: DownloadArtifactResult['failures'] = [];
  const files: VerifiedFile[] = [];
  const upToDate: UpToDateFile[] = [];
  // Files share directories, so none is removed while another file may still write into it;
  // empty ones are pruned once every file is done.
  const createdDirectories = new Set<string>();
  const queue = [...wanted];
  const worker = async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      const filePath = next;
      const entry = plan.files.find((file) => file.path === filePath);
      try {
        if (!entry)
          throw new VerifiedDownloadError({
            check: 'plan',
            message: 'the file is not in the download plan',
            artifactId: options.artifactId,
            path: filePath,
            expected: plan.files.map((file) => file.path).join(', '),
            actual: filePath,
          });
        if (!isSafeRelativePath(filePath))
          throw new VerifiedDownloadError({
            check: 'path',
            message: 'the plan path would leave the destination directory',
            artifactId: options.artifactId,
            path: filePath,
            expected: 'a relative path',
            actual: filePath,
          });
        options.onFileStart?.(entry);
        const file = await verifiedDownload(transport, {
          artifactId: options.artifactId,
          path: filePath,
          destination: path.join(options.destination, ...filePath.split('/')),
          plan,
          signal: options.signal,
          policy: options.policy,
          onProgress: options.onProgress,
          createdDirectories,
          force: options.force,
          skipUpToDate: !options.force,
          onLocalFile: options.onLocalFile,
        });
        if (file.outcome === 'up-to-date') upToDate.push(file);
        else files.push(file);
        options.onFileDone?.({ path: filePath, file });
      } catch (error) {
        failures.push({ path: filePath, error: error as Error });
        options.onFileDone?.({ path: filePath, error: error as Error });
      }
    }
  };
  const concurrency = Math.max(1, Math.min(options.concurrency ?? 4, 16));
  await Promise.all(Array.from({ length: Math.min(concurrency, wanted.length) }, worker));
  for (const directory of createdDirectories) await removeEmptyTree(directory);
  const order = (p: string) => wanted.indexOf(p);
  files.sort((a, b) => order(a.path) - order(b.path));
  upToDate.sort((a, b) => order(a.path) - order(b.path));
  failures.sort((a, b) => order(a.path) - order(b.path));
  return { artifactId: options.artifactId, revision: plan.revision, ok: failures.length === 0, files, upToDate, failures };
}

/** Removes the empty directories under `directory` (deepest first), then `directory` itself if it ends up empty. */
async function removeEmptyTree(directory: string): Promise<void> {
  const entries = await readdir(directory, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) if (entry.isDirectory()) await removeEmptyTree(path.join(directory, entry.name));
  await rmdir(directory).catch(() => {});
}

/** The artifact's download plan and the paths asked for (every planned file when none are named): what a download and a check both start from. */
export async function planFor(
  transport: Transport,
  options: { artifactId: string; tool?: string | null | undefined; paths?: readonly string[] | undefined; signal?: AbortSignal | undefined },
): Promise<{ plan: DownloadPlan; wanted: readonly string[] }> {
  const plan = (
    await transport.request<DownloadPlan>(
      catalogContract.downloadPlan,
      { params: { id: options.artifactId }, query: { tool: options.tool ?? undefined } },
      { signal: options.signal },
    )
  ).data;
  return { plan, wanted: options.paths?.length ? options.paths : plan.files.map((file) => file.path) };
}
