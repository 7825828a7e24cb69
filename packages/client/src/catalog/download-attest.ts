import { catalogContract, type CompletionResponse } from '@svc/schemas';
import { SvcError } from '../errors.ts';
import type { Transport } from '../transport.ts';
import type { Fail } from './object-fetch.ts';

/** Attempts after the first for a completion whose answer was lost: the server answers a repeat with the first record. */
const COMPLETION_RETRIES = 3;

/**
 * Step 4 of the procedure: posts the completion (digest, size and the redirect's token) once the
 * bytes are verified. Retried when the answer is lost or the server is briefly unavailable: the
 * same token and digest again answers the first record, so a retry never counts twice.
 */
export async function attestDownload(
  transport: Transport,
  file: { artifactId: string; path: string; sha256: string; sizeBytes: number; completionToken: string },
  signal: AbortSignal | undefined,
  fail: Fail,
): Promise<CompletionResponse> {
  const { artifactId, path, sha256, sizeBytes, completionToken } = file;
  try {
    return (
      await transport.request<CompletionResponse>(
        catalogContract.completeDownload,
        { params: { id: artifactId, path }, body: { sha256, sizeBytes, completionToken } },
        { signal, retry: COMPLETION_RETRIES },
      )
    ).data;
  } catch (error) {
    const svcError = SvcError.isInstance(error) ? error : undefined;
    return fail('completion', `the server refused the completion${svcError ? ` (${svcError.code}: ${svcError.message})` : `: ${(error as Error).message}`}`, {
      cause: error,
      status: svcError?.status,
      requestId: svcError?.requestId,
    });
  }
}
