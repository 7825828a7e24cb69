import { request as httpsRequest } from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { ResolveLinkResult } from '@svc/schemas';
import { ServiceError } from '../../../service-error.ts';
import { HTML_STEP_CHARS, HtmlEventStream } from '../../../bounded/html-events.ts';
import { runInSlices } from '../../../bounded/work-in-slices.ts';
import { pinnedLookup, vettedAddress, type ResolvedAddress, type SourceFetchSeam } from '../../../outbound/source-fetch.ts';

const MAX_REDIRECTS = 5;
/** Only the head of an HTML page is read for its title. */
const TITLE_BYTES = 256 * 1024;
/** A title is a line, not a page: text past this is not kept (and not collected). */
export const TITLE_MAX_CHARS = 1024;

export interface ResolveLimits {
  timeoutMs: number;
  signal: AbortSignal;
}

interface Hop {
  status: number;
  contentType: string | null;
  location: string | undefined;
  head: Buffer;
}

function mediaType(header: string | undefined): string | null {
  return header?.split(';', 1)[0]?.trim().toLowerCase() || null;
}

/** One GET to the vetted address: status, type, redirect target, and the first bytes of an HTML body. */
function getOnce(url: URL, target: ResolvedAddress, limits: ResolveLimits, ca: string | undefined): Promise<Hop> {
  return new Promise((resolve, reject) => {
    const request = httpsRequest(
      url,
      {
        method: 'GET',
        headers: { accept: 'text/html, */*;q=0.5', 'user-agent': 'svc-resolve-link' },
        lookup: pinnedLookup(target) as never,
        timeout: limits.timeoutMs,
        signal: limits.signal,
        ...(ca === undefined ? {} : { ca }),
      },
      (response: IncomingMessage) => {
        const status = response.statusCode ?? 0;
        const contentType = mediaType(response.headers['content-type']);
        const location = status >= 300 && status < 400 ? response.headers.location : undefined;
        if (location !== undefined || contentType !== 'text/html') {
          response.destroy();
          return resolve({ status, contentType, location, head: Buffer.alloc(0) });
        }
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () => resolve({ status, contentType, location, head: Buffer.concat(chunks).subarray(0, TITLE_BYTES) });
        response.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          size += chunk.length;
          if (size >= TITLE_BYTES) {
            response.destroy();
            done();
          }
        });
        response.on('end', done);
        response.on('error', done);
      },
    );
    request.on('timeout', () => request.destroy(new Error('deadline')));
    request.on('error', (error) =>
      reject(
        new ServiceError(
          'source_fetch_failed',
          `The URL could not be fetched (${error.message === 'deadline' ? `no answer within ${limits.timeoutMs / 1000} s` : 'connection failed'}).`,
        ),
      ),
    );
    request.end();
  });
}

/**
 * The text of the first `<title>` element, as a DOM reader would give it, in one linear pass
 * (the page is the caller's choice, and htmlparser2's DOM builder is quadratic on unclosed tags)
 * that stops once that element closes and keeps at most TITLE_MAX_CHARS of it. 256 KiB of
 * nested lists take about 40 ms to tokenise, so the scan yields to the event loop between slices.
 */
async function titleOf(head: Buffer): Promise<string | null> {
  let depth = 0;
  let done = false;
  let text = '';
  const stream = new HtmlEventStream(head.toString('utf8'), {
    onopentag(name) {
      if (done) return;
      if (depth > 0 || name === 'title') depth += 1;
    },
    ontext(piece) {
      if (depth === 0 || done) return;
      // Whitespace runs are cut to one space as they come, so the cap counts what is kept.
      const collapsed = piece.replace(/\s+/g, ' ');
      text += text.endsWith(' ') && collapsed.startsWith(' ') ? collapsed.slice(1) : collapsed;
      if (text.length > TITLE_MAX_CHARS) {
        text = text.slice(0, TITLE_MAX_CHARS + 1);
        done = true;
      }
    },
    onclosetag() {
      if (depth === 0 || done) return;
      depth -= 1;
      if (depth === 0) done = true;
    },
  });
  // Closing what is still open at the end adds no text, so the stream is not ended.
  await runInSlices(
    (function* () {
      while (!done && stream.writeSome(HTML_STEP_CHARS)) yield;
    })(),
  );
  const title = text.replace(/\s+/g, ' ').trim().slice(0, TITLE_MAX_CHARS).trimEnd();
  return title || null;
}

/**
 * Follows an https URL's redirects through the PDF feature's SSRF guard: every hop's host is
 * resolved and refused when any address is private, loopback or link-local, and the connection
 * goes to the vetted address. Any final status is an answer (a 404 is reported, not an error).
 */
export async function resolveLink(url: string, limits: ResolveLimits, seam: SourceFetchSeam = {}): Promise<ResolveLinkResult> {
  const deadline = AbortSignal.any([limits.signal, AbortSignal.timeout(limits.timeoutMs)]);
  const redirects: ResolveLinkResult['redirects'] = [];
  let current = new URL(url);
  for (let hop = 0; hop <= MAX_REDIRECTS; hop += 1) {
    if (current.protocol !== 'https:') throw new ServiceError('source_url_refused', `Only https URLs are resolved (a redirect led to ${current.protocol}).`);
    const target = await vettedAddress(current.hostname, seam);
    const answer = await getOnce(current, target, { timeoutMs: limits.timeoutMs, signal: deadline }, seam.ca);
    if (answer.location === undefined) {
      return {
        url,
        final_url: current.toString(),
        status: answer.status,
        content_type: answer.contentType,
        redirects,
        title: answer.contentType === 'text/html' ? await titleOf(answer.head) : null,
      };
    }
    redirects.push({ url: current.toString(), status: answer.status });
    current = new URL(answer.location, current);
  }
  throw new ServiceError('source_fetch_failed', `More than ${MAX_REDIRECTS} redirects.`);
}
