import type { PartialRecord } from './local-files.ts';
import type { DownloadCheck } from './download-error.ts';
import { StreamIdleTimeoutError } from '../stream-idle.ts';

/** The signed URL's `generation` field (names compared case-insensitively; checkStorageUrl made sure it is there). */
export function signedGeneration(location: string): string {
  for (const [name, value] of new URL(location).searchParams) if (name.toLowerCase() === 'generation') return value;
  return '';
}

export type Fail = (
  check: DownloadCheck,
  message: string,
  extra?: { expected?: string; actual?: string; cause?: unknown; status?: number; requestId?: string },
) => never;

/**
 * GETs the signed URL: the whole object, or with a partial file held, the rest of it (`Range:
 * bytes=N-`, `If-Range` with the ETag the partial's bytes came with). A store that answers the
 * whole object (200) to a range starts the file over. A partial that is already whole is not
 * fetched at all: its bytes are hashed and attested as they are.
 */
export async function fetchObject(args: {
  fetchImpl: typeof fetch;
  location: string;
  generation: string;
  expected: { sizeBytes: number };
  held: { bytes: number; record: PartialRecord } | undefined;
  signal: AbortSignal;
  aborted: () => boolean;
  fail: Fail;
  /** The stream idle timeout (ms) the store's answer must start within; undefined: none. */
  idleMs: number | undefined;
}): Promise<{ body: ReadableStream<Uint8Array> | null; from: number; etag: string | null }> {
  const { expected, held, fail } = args;
  if (held && held.bytes === expected.sizeBytes) return { body: null, from: held.bytes, etag: held.record.etag };
  const from = held?.bytes ?? 0;
  // Never follow a second redirect and never send our bearer to the store. `identity`: the
  // planned size and digest are of the stored bytes, not of a transfer encoding of them.
  const headers: Record<string, string> = { 'accept-encoding': 'identity' };
  if (from > 0) {
    headers.range = `bytes=${from}-`;
    if (held!.record.etag) headers['if-range'] = held!.record.etag;
  }
  let response: Response;
  // A store that takes the connection and never answers is given up like one that goes silent mid-body.
  const silent = new AbortController();
  const idleMs = args.idleMs;
  const timer = idleMs === undefined ? undefined : setTimeout(() => silent.abort(new StreamIdleTimeoutError('the object store', idleMs)), idleMs);
  try {
    response = await args.fetchImpl(args.location, { redirect: 'manual', signal: AbortSignal.any([args.signal, silent.signal]), headers });
  } catch (error) {
    if (silent.signal.aborted && !args.aborted())
      return fail('idle-timeout', `cannot fetch the signed URL: ${(silent.signal.reason as Error).message}`, { cause: silent.signal.reason });
    return fail(args.aborted() ? 'aborted' : 'fetch-status', `cannot fetch the signed URL: ${(error as Error).message}`, {
      expected: '200',
      actual: 'no answer',
      cause: error,
    });
  } finally {
    clearTimeout(timer);
  }
  const refuse = async (check: DownloadCheck, message: string, wanted: string, got: string): Promise<never> => {
    await response.body?.cancel().catch(() => {});
    return fail(check, message, { expected: wanted, actual: got });
  };
  const partialAnswer = from > 0 && response.status === 206;
  if (response.status !== 200 && !partialAnswer)
    return refuse('fetch-status', 'the object store did not answer 200', from > 0 ? '206 or 200' : '200', String(response.status));
  // The store names the generation it read (GCS: x-goog-generation; svc's S3 store signs the
  // object's ETag as the generation, and S3 answers the ETag it read); it must be the signed one.
  const s3 = [...new URL(args.location).searchParams.keys()].some((name) => name.toLowerCase() === 'x-amz-algorithm');
  const answered = s3 ? (response.headers.get('etag')?.replace(/^"|"$/g, '') ?? null) : response.headers.get('x-goog-generation');
  if (answered !== null && answered !== args.generation)
    return refuse('fetch-status', 'the object store answered another generation than the signed URL names', args.generation, answered);
  const length = partialAnswer ? expected.sizeBytes - from : expected.sizeBytes;
  if (partialAnswer) {
    const range = response.headers.get('content-range');
    const wanted = `bytes ${from}-${expected.sizeBytes - 1}/${expected.sizeBytes}`;
    if (range !== wanted) return refuse('content-length', 'the Content-Range of the partial answer is not the rest of the planned file', wanted, String(range));
  }
  const declared = response.headers.get('content-length');
  if (declared !== null && Number(declared) !== length)
    return refuse('content-length', 'the declared Content-Length differs from the plan', `${length} bytes`, `${declared} bytes`);
  return { body: response.body as ReadableStream<Uint8Array> | null, from: partialAnswer ? from : 0, etag: response.headers.get('etag') };
}
