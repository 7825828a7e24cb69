import path from 'node:path';
import type { DownloadPlan } from '@svc/schemas';
import type { Transport } from '../transport.ts';
import { checkLocalFile, type LocalFileState } from './local-files.ts';
import { planFor } from './download-artifact.ts';
import { isSafeRelativePath } from './safe-path.ts';

export interface CheckArtifactOptions {
  artifactId: string;
  /** Directory holding the files under their plan paths (as downloadArtifact wrote them). */
  destination: string;
  /** Only these plan paths (default: every file of the plan). */
  paths?: string[];
  tool?: DownloadPlan['tool'];
  signal?: AbortSignal;
}

/** One local file against the plan: where it is, what the plan says, and what is there (LocalFileState). */
export type CheckedFile = { path: string; destination: string; expected: { sha256: string; sizeBytes: number } } & (LocalFileState | { state: 'not-in-plan' });

export interface CheckArtifactResult {
  artifactId: string;
  revision: string;
  /** Every file is up to date. */
  ok: boolean;
  files: CheckedFile[];
}

/**
 * Verifies local files against the catalog's plan without fetching anything: each file is
 * `up-to-date` (planned size and SHA-256), `missing`, `differs`, or `not-in-plan` (a path asked
 * for that the plan does not list). Files are hashed one at a time, on the hashing thread.
 *
 * @example
 * ```ts
 * const check = await svc.catalog.checkArtifact({ artifactId: 'prompt-injection-rules', destination: './rules' });
 * for (const file of check.files) if (file.state !== 'up-to-date') console.error(`${file.path}: ${file.state}`);
 * ```
 */
export async function checkArtifact(transport: Transport, options: CheckArtifactOptions): Promise<CheckArtifactResult> {
  const { plan, wanted } = await planFor(transport, options);
  const files: CheckedFile[] = [];
  for (const filePath of wanted) {
    options.signal?.throwIfAborted();
    const entry = plan.files.find((file) => file.path === filePath);
    // A path the plan does not list, or one that would leave the directory, is never read.
    const safe = isSafeRelativePath(filePath);
    const destination = safe ? path.resolve(options.destination, ...filePath.split('/')) : '';
    if (!entry || !safe) {
      files.push({ path: filePath, destination, expected: { sha256: '', sizeBytes: 0 }, state: 'not-in-plan' });
      continue;
    }
    const expected = { sha256: entry.sha256, sizeBytes: entry.sizeBytes };
    files.push({ path: filePath, destination, expected, ...(await checkLocalFile(destination, expected)) });
  }
  return { artifactId: options.artifactId, revision: plan.revision, ok: files.every((file) => file.state === 'up-to-date'), files };
}
