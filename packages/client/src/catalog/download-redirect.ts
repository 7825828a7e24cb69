import { catalogContract } from '@svc/schemas';
import { SvcError } from '../errors.ts';
import type { Transport } from '../transport.ts';
import { VerifiedDownloadError } from './download-error.ts';
import type { Fail } from './object-fetch.ts';

export type RedirectAnswer = Promise<{ data: { location: string; headers: Headers }; response: Response }>;

/**
 * Asks the download path for its redirect, not followed and never retried (each answer issues a
 * completion token). A failure is read by readRedirect, unless an earlier step fails first.
 */
export function askRedirect(transport: Transport, artifactId: string, filePath: string, signal: AbortSignal | undefined): RedirectAnswer {
  const asked = transport.request<{ location: string; headers: Headers }>(
    catalogContract.download,
    { params: { id: artifactId, path: filePath } },
    { signal, retry: 0 },
  );
  asked.catch(() => {});
  return asked;
}

/** Step 1 of the procedure: the answer must be a 302 carrying X-Svc-Completion-Token; answers its location and token. */
export async function readRedirect(
  redirected: RedirectAnswer,
  signal: AbortSignal | undefined,
  fail: Fail,
): Promise<{ location: string; completionToken: string }> {
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
  return { location, completionToken: completionToken! };
}
