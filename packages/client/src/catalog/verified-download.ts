import { rename, stat } from 'node:fs/promises';
import path from 'node:path';
import { catalogContract, type DownloadPlan } from '@svc/schemas';
import { idleTimeoutOf, StreamIdleTimeoutError } from '../stream-idle.ts';
import type { Transport } from '../transport.ts';
import { attestDownload } from './download-attest.ts';
import { VerifiedDownloadError, type DownloadCheck } from './download-error.ts';
import { askRedirect, readRedirect } from './download-redirect.ts';
import { makeDestinationDirectory } from './destination-directory.ts';
import { BodyOverflowError, HASHING_THREAD_MIN_BYTES, writeHashedBody } from './hashed-file-write.ts';
import { prewarmHashingThread } from './hashing-thread.ts';
import { checkLocalFile, discardPartial, partialFiles, readPartial, removeLegacyPartials, writePartialRecord, type LocalFileState } from './local-files.ts';
import { fetchObject, signedGeneration } from './object-fetch.ts';
import { lockPartial, PartialInUseError } from './partial-lock.ts';
import { isSafeRelativePath } from './safe-path.ts';
import { checkStorageUrl, resolveStoragePolicy } from './storage-policy.ts';
import type { UpToDateFile, VerifiedDownloadOptions, VerifiedFile } from './verified-download-types.ts';

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
 * Each step lives in its own module: the redirect (download-redirect.ts), the signed URL's fetch
 * (object-fetch.ts), the hashed write (hashed-file-write.ts), the partial's files and lock
 * (local-files.ts, partial-lock.ts) and the completion (download-attest.ts); this function runs
 * them in order and decides what a failure keeps.
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
  const compareFirst = options.skipUpToDate === true && !options.force;
  let redirected = !compareFirst || !(await exists(destination)) ? askRedirect(transport, artifactId, filePath, signal) : undefined;
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

  const removeCreated = await makeDestinationDirectory(destination, options.createdDirectories);
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
    redirected ??= askRedirect(transport, artifactId, filePath, signal);

    // 1. The redirect, not followed.
    const { location, completionToken } = await readRedirect(redirected, signal, fail);

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
      const completion = await attestDownload(transport, { artifactId, path: filePath, sha256, sizeBytes: received, completionToken }, signal, fail);
      await rename(partial, destination);
      published = true;
      await discardPartial(destination);
      return {
        ...fields,
        sha256,
        sizeBytes: received,
        transferredBytes: expected.sizeBytes - fetched.from,
        outcome: fetched.from > 0 ? 'resumed' : 'fetched',
        completion,
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
