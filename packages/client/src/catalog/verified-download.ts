import { mkdir, rename, rmdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { catalogContract, type CompletionResponse, type DownloadPlan } from '@svc/schemas';
import { SvcError } from '../errors.ts';
import { idleTimeoutOf, StreamIdleTimeoutError } from '../stream-idle.ts';
import type { Transport } from '../transport.ts';
import { VerifiedDownloadError, type DownloadCheck } from './download-error.ts';
import { BodyOverflowError, HASHING_THREAD_MIN_BYTES, writeHashedBody } from './hashed-file-write.ts';
import { prewarmHashingThread } from './hashing-thread.ts';
import { checkLocalFile, discardPartial, partialFiles, readPartial, removeLegacyPartials, writePartialRecord, type LocalFileState } from './local-files.ts';
import { fetchObject, signedGeneration } from './object-fetch.ts';
import { lockPartial, PartialInUseError } from './partial-lock.ts';
import { checkStorageUrl, resolveStoragePolicy, type StoragePolicy } from './storage-policy.ts';

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

/** Attempts after the first for a completion whose answer was lost: the server answers a repeat with the first record. */
const COMPLETION_RETRIES = 3;

/** Removes `directory` and its parents up to `top` while they are empty; a non-empty one stops the walk. */
export async function removeEmptyDirectories(directory: string, top: string): Promise<void> {
  for (let current = directory; current.startsWith(top); current = path.dirname(current)) {
    try {
      await rmdir(current);
    } catch {
      return;
    }
    if (current === top) return;
  }
}

interface DownloadedFileFields {
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

const SAFE_SEGMENT = /^[A-Za-z0-9._+@=-]+$/;

/** A plan path must stay inside the destination directory, whatever the server says. */
export function isSafeRelativePath(filePath: string): boolean {
  return (
    filePath.length > 0 &&
    !filePath.startsWith('/') &&
    filePath.split('/').every((segment) => segment !== '.' && segment !== '..' && SAFE_SEGMENT.test(segment))
  );
}

/**
 * Downloads one hosted file with proof that the bytes are the planned bytes, following the
 * spec's procedure step by step: the download path is requested without following redirects
 * (302 expected, completion token required); the target must be HTTPS on the object-storage
 * host family with no credentials or fragment and every signed-URL field present, expiry
 * 1..300 s; the file is fetched expecting 200, a declared length must equal the plan, and more
 * bytes than planned abort; SHA-256 is computed while writing a partial file beside the
 * destination; digest and size are compared with the plan; only then is the completion posted,
 * and only after it succeeds is the file renamed into place. Any failure leaves no file at the
 * destination and posts no completion.
 *
 * The partial file has a stable name (`.<name>.svc-partial`, with a `.json` record of the
 * artifact, path, planned digest and object generation it holds bytes of). An interrupted or
 * failed transfer keeps it, and the next call for the same file resumes it with `Range: bytes=N-`
 * (and `If-Range`), hashing the bytes on disk first and the rest as they arrive, so the digest is
 * always of the whole file. A partial of another generation or another planned file is
 * discarded; wrong bytes (a digest or size that differs) are discarded too. `force` starts over.
 *
 * @example
 * ```ts
 * const svc = createClient({ apiUrl: 'https://svc.example' });
 * const file = await svc.catalog.verifiedDownload({ artifactId: 'tiny-sentiment-lexicon', path: 'lexicon.tsv', destination: './lexicon.tsv' });
 * process.stdout.write(`${file.sha256} ${file.completion.status}\n`); // '… client-attested'
 * ```
 */
export async function verifiedDownload(transport: Transport, options: VerifiedDownloadOptions & { skipUpToDate?: false }): Promise<VerifiedFile>;
export async function verifiedDownload(transport: Transport, options: VerifiedDownloadOptions): Promise<VerifiedFile | UpToDateFile>;
export async function verifiedDownload(transport: Transport, options: VerifiedDownloadOptions): Promise<VerifiedFile | UpToDateFile> {
  const { artifactId, path: filePath, signal } = options;
  const fail = (
    check: DownloadCheck,
    message: string,
    extra: { expected?: string; actual?: string; cause?: unknown; status?: number; requestId?: string } = {},
  ): never => {
    throw new VerifiedDownloadError({ check, message, artifactId, path: filePath, ...extra });
  };
  const policy = resolveStoragePolicy(
    {
      hosts: [...(transport.options.storagePolicy?.hosts ?? []), ...(options.policy?.hosts ?? [])],
      allowHttpLoopback: options.policy?.allowHttpLoopback ?? transport.options.storagePolicy?.allowHttpLoopback ?? false,
      trustLoopbackServerStore: options.policy?.trustLoopbackServerStore ?? transport.options.storagePolicy?.trustLoopbackServerStore,
    },
    undefined,
    transport.options.apiUrl,
  );

  if (!isSafeRelativePath(filePath))
    fail('path', 'the file path would leave the destination', { expected: 'a relative path without "." or ".." segments', actual: JSON.stringify(filePath) });
  const destination = path.resolve(options.destination);
  // The plan and the redirect do not depend on each other, so both are asked at once (one round
  // trip saved) when the destination is not there; a file already there is compared with the plan
  // first, and one that is up to date asks no redirect (no completion token is issued for it).
  const planned = options.plan
    ? Promise.resolve(options.plan)
    : transport
        .request<DownloadPlan>(catalogContract.downloadPlan, { params: { id: artifactId }, query: { tool: options.tool ?? undefined } }, { signal })
        .then((answer) => answer.data);
  const askRedirect = () => {
    const asked = transport.request<{ location: string; headers: Headers }>(
      catalogContract.download,
      { params: { id: artifactId, path: filePath } },
      { signal, retry: 0 },
    );
    asked.catch(() => {}); // read below, unless an earlier step fails first
    return asked;
  };
  const compareFirst = options.skipUpToDate === true && !options.force;
  let redirected = !compareFirst || !(await exists(destination)) ? askRedirect() : undefined;
  let plan: DownloadPlan | undefined;
  try {
    plan = await planned;
  } catch (error) {
    fail('plan', `cannot read the download plan: ${(error as Error).message}`, { cause: error });
  }
  const entry = plan!.files.find((file) => file.path === filePath);
  if (!entry)
    fail('plan', 'the file is not in the download plan', { expected: plan!.files.map((file) => file.path).join(', ') || 'no hosted files', actual: filePath });
  const expected = entry!;
  const fields = { artifactId, revision: plan!.revision, path: filePath, destination };
  // A large file is hashed on the hashing thread, which boots while the redirect is answered.
  if (expected.sizeBytes >= HASHING_THREAD_MIN_BYTES) prewarmHashingThread();

  // The first directory mkdir had to create, if any: a failure removes what it made, so a failed
  // download leaves no empty directory behind. It is made first because the partial's lock is in it.
  const created = await mkdir(path.dirname(destination), { recursive: true });
  if (created) options.createdDirectories?.add(created);
  const removeCreated = async () => {
    if (created && !options.createdDirectories) await removeEmptyDirectories(path.dirname(destination), created);
  };
  // One download at a time writes a destination's partial file: a second is refused, touching nothing.
  let unlock: () => Promise<void>;
  try {
    unlock = await lockPartial(destination);
  } catch (error) {
    await removeCreated();
    if (error instanceof PartialInUseError) fail('locked', error.message, { cause: error });
    throw error;
  }
  let published = false;
  try {
    // 0. What is there already: the file itself, and partials this or an older version left.
    await removeLegacyPartials(destination);
    if (compareFirst) {
      let local: LocalFileState;
      try {
        local = await checkLocalFile(destination, expected);
      } catch (error) {
        return fail('write', `cannot read the file at the destination: ${(error as Error).message}`, { cause: error });
      }
      options.onLocalFile?.({ path: filePath, destination, ...local });
      if (local.state === 'up-to-date') {
        await discardPartial(destination);
        return { ...fields, sha256: expected.sha256, sizeBytes: expected.sizeBytes, transferredBytes: 0, outcome: 'up-to-date', completion: null };
      }
    }
    redirected ??= askRedirect();

    // 1. The redirect, not followed.
    let location = '';
    let completionToken: string | null = null;
    try {
      const { data, response } = await redirected;
      if (response.status !== 302) fail('redirect-status', 'the download path did not answer a redirect', { expected: '302', actual: String(response.status) });
      location = data.location;
      completionToken = data.headers.get('x-svc-completion-token');
    } catch (error) {
      if (error instanceof VerifiedDownloadError) throw error;
      if (SvcError.isInstance(error)) {
        fail(
          'redirect-status',
          `the download path answered ${error.status ?? 'nothing'}${error.status && error.status >= 400 ? ` (${error.code}: ${error.message})` : ''}`,
          { expected: '302', actual: String(error.status ?? error.code), cause: error, status: error.status, requestId: error.requestId },
        );
      }
      fail(signal?.aborted ? 'aborted' : 'redirect-status', (error as Error).message, { cause: error });
    }
    if (!completionToken)
      fail('completion-token', 'the redirect carries no X-Svc-Completion-Token header', { expected: 'an X-Svc-Completion-Token header', actual: 'none' });

    // 2. The redirect target.
    const problem = checkStorageUrl(location, policy);
    if (problem) fail(problem.check, problem.message, { expected: problem.expected, actual: problem.actual });
    const generation = signedGeneration(location);

    // 3. The bytes, hashed on the way to the partial file beside the destination: resumed from
    // where an interrupted run stopped when the partial is of this file and this generation.
    const identity = { artifactId, path: filePath, sha256: expected.sha256, sizeBytes: expected.sizeBytes };
    let held = options.force ? undefined : await readPartial(destination, identity);
    if (held && held.record.generation !== generation) held = undefined; // the object was rewritten: start over
    if (!held) await discardPartial(destination);
    const { partial } = partialFiles(destination);
    // A partial that is kept (an interrupt, a lost connection, a full disk, a refused completion)
    // is resumed by the next run; one whose bytes are wrong is removed.
    let keepPartial = true;
    const fetchImpl = transport.options.fetch ?? globalThis.fetch;
    const abort = new AbortController();
    const combined = signal ? AbortSignal.any([signal, abort.signal]) : abort.signal;
    try {
      const idleMs = idleTimeoutOf(options.streamIdleTimeout, transport.options.streamIdleTimeout);
      const fetched = await fetchObject({
        fetchImpl,
        location,
        generation,
        expected,
        held,
        signal: combined,
        aborted: () => signal?.aborted === true,
        fail,
        idleMs,
      });
      if (fetched.from === 0) {
        await discardPartial(destination);
        await writePartialRecord(destination, { ...identity, generation, etag: fetched.etag });
      }
      let received = 0;
      let sha256 = '';
      const report = options.onProgress;
      try {
        ({ sha256, sizeBytes: received } = await writeHashedBody(fetched.body, partial, {
          maxBytes: expected.sizeBytes - fetched.from,
          resumeFrom: fetched.from,
          signal: combined,
          idleTimeoutMs: idleMs,
          onBytes:
            report && ((receivedBytes) => report({ artifactId, path: filePath, receivedBytes: fetched.from + receivedBytes, totalBytes: expected.sizeBytes })),
        }));
      } catch (error) {
        if (error instanceof BodyOverflowError) {
          abort.abort();
          keepPartial = false;
          fail('size', 'the store sent more bytes than planned; stopped reading', {
            expected: `${expected.sizeBytes} bytes`,
            actual: `more than ${expected.sizeBytes} bytes`,
          });
        }
        if (signal?.aborted) fail('aborted', 'the download was aborted', { cause: error });
        // The partial is kept: the next run resumes from the bytes that did arrive.
        if (error instanceof StreamIdleTimeoutError) fail('idle-timeout', `the transfer stalled: ${error.message}`, { cause: error });
        if ((error as NodeJS.ErrnoException).code === 'ESHORT') keepPartial = false;
        fail('write', `the transfer failed: ${(error as Error).message}`, { cause: error });
      }
      // Wrong bytes are not worth resuming: the next run starts over.
      keepPartial = false;
      if (received !== expected.sizeBytes)
        fail('size', 'the body length differs from the plan', { expected: `${expected.sizeBytes} bytes`, actual: `${received} bytes` });
      if (sha256 !== expected.sha256) fail('sha256', 'the SHA-256 of the bytes differs from the plan', { expected: expected.sha256, actual: sha256 });
      // Verified bytes are kept if the completion is refused: the next run re-hashes and attests them without fetching.
      keepPartial = true;

      // 4. Attest, then publish.
      let completion: CompletionResponse;
      try {
        // Retried when the answer is lost or the server is briefly unavailable: the same token and
        // digest again answers the first record, so a retry never counts twice.
        completion = (
          await transport.request<CompletionResponse>(
            catalogContract.completeDownload,
            { params: { id: artifactId, path: filePath }, body: { sha256, sizeBytes: received, completionToken: completionToken! } },
            { signal, retry: COMPLETION_RETRIES },
          )
        ).data;
      } catch (error) {
        const svcError = SvcError.isInstance(error) ? error : undefined;
        fail('completion', `the server refused the completion${svcError ? ` (${svcError.code}: ${svcError.message})` : `: ${(error as Error).message}`}`, {
          cause: error,
          status: svcError?.status,
          requestId: svcError?.requestId,
        });
      }
      await rename(partial, destination);
      published = true;
      await discardPartial(destination);
      return {
        ...fields,
        sha256,
        sizeBytes: received,
        transferredBytes: expected.sizeBytes - fetched.from,
        outcome: fetched.from > 0 ? 'resumed' : 'fetched',
        completion: completion!,
      };
    } finally {
      if (!published && !keepPartial) await discardPartial(destination);
    }
  } finally {
    await unlock();
    if (!published) await removeCreated();
  }
}

const exists = (file: string) =>
  stat(file).then(
    () => true,
    () => false,
  );
