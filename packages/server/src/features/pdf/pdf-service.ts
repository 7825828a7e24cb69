import type { ExtractedPage, PdfExtraction, PdfExtractionSummary, Principal, SseMessage } from '@svc/schemas';
import { pdfLimits, pdfStreamEventNames } from '@svc/schemas';
import { consumeWindow } from '../../db/rate-counters.ts';
import type { ServerDeps } from '../../deps.ts';
import type { RequestContext } from '../../http/request-context.ts';
import { ServiceError } from '../../service-error.ts';
import type { ParserPool, ParseRun, PoolPlace } from './parser-pool.ts';
import type { WorkerPage, WorkerSummary } from './worker/pdf-worker.ts';

export interface ExtractOptions {
  startPage: number;
  maxPages: number;
  maxChars: number;
  password?: string;
}

/** Where the bytes come from; `source_ms` measures getting them. */
export type PdfSource = { kind: 'bytes'; bytes: Buffer } | { kind: 'base64'; data: string } | { kind: 'url'; url: string };

const PDF_HEADER = Buffer.from('%PDF-');

/**
 * A JSON extract body declaring at most this many bytes is read before the queue is asked: a URL
 * request fits many times over, and reading it costs less than the answer to a refused URL.
 */
const READ_BEFORE_QUEUE_BYTES = 64 * 1024;

/** PDF readers accept the header anywhere in the first KiB; so do we, and nothing else. */
export function looksLikePdf(bytes: Uint8Array): boolean {
  return Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, 1024)).indexOf(PDF_HEADER) !== -1;
}

function summaryOf(summary: WorkerSummary): PdfExtractionSummary {
  const { peak_heap_bytes: _peak, engine_load_ms: _load, html: _html, ...rest } = summary;
  return rest;
}

type PdfServiceDeps = Pick<ServerDeps, 'config' | 'database' | 'testSeams'>;

/**
 * PDF extraction as plain functions over a request: rate limit, source, staging, then the
 * parser pool. Both routes and the document route go through here, so limits hold everywhere.
 */
export class PdfService {
  private readonly deps: PdfServiceDeps;
  readonly pool: ParserPool;

  constructor(deps: PdfServiceDeps, pool: ParserPool) {
    this.deps = deps;
    this.pool = pool;
  }

  /** Requests admitted before their body was read, with the queue place each holds. */
  private readonly places = new WeakMap<RequestContext, PoolPlace>();
  /** Requests already counted against the rate limit (it is counted once per request). */
  private readonly counted = new WeakSet<RequestContext>();

  /**
   * The upload routes' admission, run by the adapter before the body is read: a place in the
   * parser queue first (a full pool refuses without counting against the rate limit), then the
   * rate limit. Answers how to give the place back if the request ends without using it.
   */
  async admitBeforeBody(request: RequestContext): Promise<() => void> {
    const release = await this.placeBeforeBody(request);
    try {
      await this.admit(request.principal, request);
    } catch (error) {
      release();
      throw error;
    }
    return release;
  }

  /**
   * The document route's admission before its body: a place in the parser queue only, since
   * whether the document needs a worker (a PDF or DOCX, which also count against the rate limit)
   * is in the body. A full pool refuses before up to 16 MiB is read; an HTML, Markdown or text
   * document gives the place back as soon as its format is known (`releasePlace`).
   */
  async placeBeforeBody(request: RequestContext): Promise<() => void> {
    const place = this.pool.reserve();
    this.places.set(request, place);
    return () => void place.release();
  }

  /**
   * The JSON extract route's admission before its body. A body declaring at most 64 KiB (a URL, a
   * small document in base64) is read first and admitted by `admitSource`, so a refused URL gets
   * its 422 whatever the queue holds; a larger one (or chunked) holds its place before it is read,
   * as an upload does.
   */
  async admitBeforeJsonBody(request: RequestContext): Promise<(() => void) | undefined> {
    const declared = Number(request.headers['content-length'] ?? Number.NaN);
    if (Number.isFinite(declared) && declared <= READ_BEFORE_QUEUE_BYTES) return undefined;
    return this.admitBeforeBody(request);
  }

  /**
   * After the body: the cheap refusal first (a URL whose host is a non-public address literal,
   * no lookup needed), then the queue place and the rate limit, unless the request took them
   * before its body. Answers how to give back a place the parse did not take over.
   */
  async admitSource(source: PdfSource, request: RequestContext): Promise<() => void> {
    if (source.kind === 'url') {
      const { refuseUnfetchableLiteral } = await import('../../outbound/source-fetch.ts');
      refuseUnfetchableLiteral(source.url, this.deps.testSeams?.pdfSourceFetch);
    }
    if (!this.places.has(request)) return this.admitBeforeBody(request);
    await this.admit(request.principal, request);
    return () => undefined;
  }

  /** Gives back the queue place of a request that turned out to need no worker. */
  releasePlace(request: RequestContext): void {
    this.places.get(request)?.release();
  }

  /** Per-principal fixed-window limit, counted in the database so replicas share it (once per request). */
  async admit(principal: Principal, request: RequestContext): Promise<void> {
    if (this.counted.has(request)) return;
    this.counted.add(request);
    const { rateLimit, rateWindowSeconds } = this.deps.config.pdf;
    await request.timing.measure('admission_ms', async () => {
      if (rateLimit === 0) return;
      const decision = await consumeWindow(this.deps.database.sequelize, {
        bucket: `pdf:principal:${principal.kind}:${principal.id}`,
        windowSeconds: rateWindowSeconds,
        maxHits: rateLimit,
      });
      if (!decision.allowed) {
        throw new ServiceError(
          'rate_limited',
          `At most ${rateLimit} extractions per ${rateWindowSeconds} s for one principal; retry in ${decision.retryAfterSeconds} s.`,
          {
            retryAfterSeconds: decision.retryAfterSeconds,
            retryable: true,
          },
        );
      }
    });
  }

  /** Gets the bytes (decoding or fetching them under the byte cap). */
  async source(source: PdfSource, request: RequestContext): Promise<Buffer> {
    return request.timing.measure('source_ms', async () => {
      if (source.kind === 'bytes') return source.bytes;
      if (source.kind === 'base64') {
        // 4 base64 characters carry 3 bytes: refuse before decoding when it cannot fit.
        if (Math.floor((source.data.length * 3) / 4) - 2 > pdfLimits.maxFileBytes)
          throw new ServiceError('payload_too_large', `The decoded document is over ${pdfLimits.maxFileBytes} bytes, the most taken.`);
        const bytes = Buffer.from(source.data, 'base64');
        if (bytes.byteLength > pdfLimits.maxFileBytes)
          throw new ServiceError('payload_too_large', `The decoded document is ${bytes.byteLength} bytes; at most ${pdfLimits.maxFileBytes} are taken.`);
        return bytes;
      }
      const { fetchPublicHttps } = await import('../../outbound/source-fetch.ts');
      return fetchPublicHttps(
        source.url,
        { maxBytes: pdfLimits.maxFileBytes, timeoutMs: this.deps.config.pdf.fetchTimeoutMs, signal: request.signal },
        this.deps.testSeams?.pdfSourceFetch,
      );
    });
  }

  /** Checks the bytes are a PDF and copies them into a buffer of their own, to move to the worker. */
  stage(bytes: Buffer, request: RequestContext): Uint8Array {
    const started = performance.now();
    try {
      if (bytes.byteLength === 0) throw new ServiceError('pdf_invalid', 'The body is empty; send the PDF bytes.');
      if (!looksLikePdf(bytes)) throw new ServiceError('pdf_invalid', 'The bytes are not a PDF (no %PDF- header in the first 1024 bytes).');
      const owned = new Uint8Array(new ArrayBuffer(bytes.byteLength));
      owned.set(bytes);
      return owned;
    } finally {
      request.timing.record('staging_ms', performance.now() - started);
    }
  }

  private start(bytes: Uint8Array, options: ExtractOptions, request: RequestContext): ParseRun {
    return this.pool.run(
      { bytes, password: options.password, startPage: options.startPage, maxPages: options.maxPages, maxChars: options.maxChars },
      this.deps.config.pdf.engine,
      this.places.get(request),
    );
  }

  private recordTimings(request: RequestContext, timings: Record<string, number>): Record<string, number> {
    for (const [name, ms] of Object.entries(timings)) request.timing.record(name, ms);
    return Object.fromEntries(
      ['admission_ms', 'upload_read_ms', 'source_ms', 'staging_ms', 'worker_start_ms', 'worker_queue_ms', 'worker_roundtrip_ms', 'executor_dispatch_ms'].map(
        (name) => [name, round(request.timing.get(name) ?? 0)],
      ),
    );
  }

  private finishTotal(request: RequestContext, handlerStarted: number): number {
    const total = (request.timing.get('upload_read_ms') ?? 0) + (performance.now() - handlerStarted);
    request.timing.record('total_ms', total);
    return total;
  }

  /** The whole extraction as one JSON answer. */
  async extract(bytes: Buffer, options: ExtractOptions, request: RequestContext, handlerStarted: number): Promise<PdfExtraction> {
    const staged = this.stage(bytes, request);
    const run = this.start(staged, options, request);
    const cancel = () => run.cancel();
    request.signal.addEventListener('abort', cancel, { once: true });
    try {
      const pages: WorkerPage[] = [];
      for await (const page of run.pages) pages.push(page);
      const { summary } = await run.result;
      return { ...summaryOf(summary), pages };
    } finally {
      request.signal.removeEventListener('abort', cancel);
      // Recorded on failures too, so a 503 or 504 says where the time went.
      this.recordTimings(request, { ...run.timings() });
      this.finishTotal(request, handlerStarted);
    }
  }

  /** Converts a DOCX to HTML in a parser worker (same admission, deadlines and memory cap). */
  async convertDocx(bytes: Buffer, request: RequestContext, handlerStarted: number): Promise<{ html: string; warnings: PdfExtractionSummary['warnings'] }> {
    const owned = new Uint8Array(new ArrayBuffer(bytes.byteLength));
    owned.set(bytes);
    const run = this.pool.run({ bytes: owned, startPage: 1, maxPages: 1, maxChars: 1, format: 'docx' }, this.deps.config.pdf.engine, this.places.get(request));
    try {
      const { summary } = await run.result;
      return { html: summary.html ?? '', warnings: summary.warnings };
    } finally {
      this.recordTimings(request, { ...run.timings() });
      this.finishTotal(request, handlerStarted);
    }
  }

  /**
   * The extraction as events: admission, source and staging happen before the answer starts (so
   * their failures are ordinary HTTP errors); then one `page-extracted` per page as the worker
   * reads it and `extraction-completed` with the summary and every timing.
   */
  stream(
    bytes: Buffer,
    options: ExtractOptions,
    request: RequestContext,
    handlerStarted: number,
  ): AsyncIterable<SseMessage<ExtractedPage | PdfExtractionSummary>> {
    const staged = this.stage(bytes, request);
    const run = this.start(staged, options, request);
    // A client that goes away mid-page stops the worker now, not when that page is done.
    const cancel = () => run.cancel();
    request.signal.addEventListener('abort', cancel, { once: true });
    return this.events(run, request, handlerStarted, cancel);
  }

  /**
   * A method rather than a generator made per call: the first call of a generator function made
   * per call gives it a new map in the old generation, which keeps the request alive through
   * young collections (docs/inference.md, "What the young collections promote").
   */
  private async *events(
    run: ParseRun,
    request: RequestContext,
    handlerStarted: number,
    cancel: () => void,
  ): AsyncGenerator<SseMessage<ExtractedPage | PdfExtractionSummary>> {
    let completed = false;
    try {
      for await (const page of run.pages) yield { event: pdfStreamEventNames.page, data: page };
      const { summary } = await run.result;
      const timingsMs = this.recordTimings(request, { ...run.timings() });
      timingsMs.total_ms = round(this.finishTotal(request, handlerStarted));
      completed = true;
      yield { event: pdfStreamEventNames.completed, data: { ...summaryOf(summary), timings_ms: timingsMs } };
    } finally {
      // Leaving early (client gone, consumer stopped) stops the parse and frees the worker.
      request.signal.removeEventListener('abort', cancel);
      if (!completed) run.cancel();
    }
  }
}

const round = (value: number) => Math.round(value * 10) / 10;
