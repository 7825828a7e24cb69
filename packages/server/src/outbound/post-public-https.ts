import { request as httpsRequest } from 'node:https';
import { pinnedLookup, refuseUnfetchableLiteral, vettedAddress, type SourceFetchSeam } from './source-fetch.ts';

/**
 * POSTs a small JSON body to an https URL under the same rules as the PDF URL fetch: https only,
 * every address of the host public unicast (`vettedAddress`), the connection pinned to the address
 * checked, no redirect followed, one deadline. Answers the status (the body is read and dropped, at
 * most 64 KiB of it); throws on a refused URL, a connection failure or the deadline.
 */
export async function postPublicHttps(
  url: string,
  body: string,
  headers: Record<string, string>,
  options: { timeoutMs: number; signal?: AbortSignal },
  seam: SourceFetchSeam = {},
): Promise<number> {
  const target = new URL(url);
  if (target.protocol !== 'https:') throw new Error('only https URLs are called');
  refuseUnfetchableLiteral(url, seam);
  const address = await vettedAddress(target.hostname, seam);
  return new Promise((resolve, reject) => {
    const request = httpsRequest(
      target,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'svc-webhooks', ...headers },
        lookup: pinnedLookup(address),
        timeout: options.timeoutMs,
        ...(options.signal ? { signal: options.signal } : {}),
        ...(seam.ca === undefined ? {} : { ca: seam.ca }),
      },
      (response) => {
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > 65_536) response.destroy();
        });
        response.on('end', () => resolve(response.statusCode ?? 0));
        response.on('close', () => resolve(response.statusCode ?? 0));
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
    request.on('error', reject);
    request.end(body);
  });
}
