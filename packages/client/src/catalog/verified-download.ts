import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { catalogContract, type CompletionResponse, type DownloadPlan } from '@svc/schemas';
import { SvcError } from '../errors.ts';
import type { Transport } from '../transport.ts';
import { VerifiedDownloadError, type DownloadCheck } from './download-error.ts';
import { BodyOverflowError, HASHING_THREAD_MIN_BYTES, writeHashedBody } from './hashed-file-write.ts';
import { prewarmHashingThread } from './hashing-thread.ts';
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

export interface VerifiedFile {
  artifactId: string;
  revision: string;
  path: string;
  destination: string;
  sha256: string;
  sizeBytes: number;
  completion: CompletionResponse;
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
 * bytes than planned abort; SHA-256 is computed while writing a temporary file beside the
 * destination; digest and size are compared with the plan; only then is the completion posted,
 * and only after it succeeds is the file renamed into place. Any failure leaves no file at the
 * destination and posts no completion.
 *
 * @example
 * ```ts
 * const svc = createClient({ apiUrl: 'https://svc.example' });
 * const file = await svc.catalog.verifiedDownload({ artifactId: 'tiny-sentiment-lexicon', path: 'lexicon.tsv', destination: './lexicon.tsv' });
 * process.stdout.write(`${file.sha256} ${file.completion.status}\n`); // '… client-attested'
 * ```
 */
export async function verifiedDownload(transport: Transport, options: VerifiedDownloadOptions): Promise<VerifiedFile> {
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
  // The plan and the redirect do not depend on each other, so both are asked at once (one round
  // trip saved); the plan is still checked first, and a redirect without a usable plan is only
  // an unused token that expires.
  const planned = options.plan
    ? Promise.resolve(options.plan)
    : transport
        .request<DownloadPlan>(catalogContract.downloadPlan, { params: { id: artifactId }, query: { tool: options.tool ?? undefined } }, { signal })
        .then((answer) => answer.data);
  const redirected = transport.request<{ location: string; headers: Headers }>(
    catalogContract.download,
    { params: { id: artifactId, path: filePath } },
    { signal, retry: 0 },
  );
  redirected.catch(() => {}); // read below, unless the plan fails first
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
  // A large file is hashed on the hashing thread, which boots while the redirect is answered.
  if (expected.sizeBytes >= HASHING_THREAD_MIN_BYTES) prewarmHashingThread();

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

  // 3. The bytes, hashed on the way to a temporary file beside the destination.
  const destination = path.resolve(options.destination);
  // The first directory mkdir had to create, if any: a failure removes what it made, so a failed
  // download leaves no empty directory behind.
  const created = await mkdir(path.dirname(destination), { recursive: true });
  if (created) options.createdDirectories?.add(created);
  let published = false;
  const temporary = path.join(path.dirname(destination), `.${path.basename(destination)}.${randomBytes(6).toString('hex')}.svc-partial`);
  const fetchImpl = transport.options.fetch ?? globalThis.fetch;
  const abort = new AbortController();
  const combined = signal ? AbortSignal.any([signal, abort.signal]) : abort.signal;
  try {
    let response: Response;
    try {
      // Never follow a second redirect and never send our bearer to the store. `identity`: the
      // planned size and digest are of the stored bytes, not of a transfer encoding of them.
      response = await fetchImpl(location, { redirect: 'manual', signal: combined, headers: { 'accept-encoding': 'identity' } });
    } catch (error) {
      fail(signal?.aborted ? 'aborted' : 'fetch-status', `cannot fetch the signed URL: ${(error as Error).message}`, {
        expected: '200',
        actual: 'no answer',
        cause: error,
      });
    }
    if (response!.status !== 200) {
      await response!.body?.cancel().catch(() => {});
      fail('fetch-status', 'the object store did not answer 200', { expected: '200', actual: String(response!.status) });
    }
    const declared = response!.headers.get('content-length');
    if (declared !== null && Number(declared) !== expected.sizeBytes) {
      await response!.body?.cancel().catch(() => {});
      fail('content-length', 'the declared Content-Length differs from the plan', { expected: `${expected.sizeBytes} bytes`, actual: `${declared} bytes` });
    }
    let received = 0;
    let sha256 = '';
    const report = options.onProgress;
    try {
      ({ sha256, sizeBytes: received } = await writeHashedBody(response!.body as ReadableStream<Uint8Array> | null, temporary, {
        maxBytes: expected.sizeBytes,
        signal: combined,
        onBytes: report && ((receivedBytes) => report({ artifactId, path: filePath, receivedBytes, totalBytes: expected.sizeBytes })),
      }));
    } catch (error) {
      if (error instanceof BodyOverflowError) {
        abort.abort();
        fail('size', 'the store sent more bytes than planned; stopped reading', {
          expected: `${expected.sizeBytes} bytes`,
          actual: `more than ${expected.sizeBytes} bytes`,
        });
      }
      if (signal?.aborted) fail('aborted', 'the download was aborted', { cause: error });
      fail('write', `the transfer failed: ${(error as Error).message}`, { cause: error });
    }
    if (received !== expected.sizeBytes)
      fail('size', 'the body length differs from the plan', { expected: `${expected.sizeBytes} bytes`, actual: `${received} bytes` });
    if (sha256 !== expected.sha256) fail('sha256', 'the SHA-256 of the bytes differs from the plan', { expected: expected.sha256, actual: sha256 });

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
    await rename(temporary, destination);
    published = true;
    return { artifactId, revision: plan!.revision, path: filePath, destination, sha256, sizeBytes: received, completion: completion! };
  } finally {
    await rm(temporary, { force: true });
    if (!published && created && !options.createdDirectories) await removeEmptyDirectories(path.dirname(destination), created);
  }
}
