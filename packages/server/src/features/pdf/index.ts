import { documentsContract, pdfContract } from '@svc/schemas';
import type { ServerDeps } from '../../deps.ts';
import type { RequestContext } from '../../http/request-context.ts';
import { defineHandlers, withAdmission } from '../../http/handler-types.ts';
import type { Feature } from '../feature.ts';
import { extractDocument } from './document-service.ts';
import { ParserPool } from './parser-pool.ts';
import { PdfService, type PdfSource } from './pdf-service.ts';

export type { PdfService } from './pdf-service.ts';

/** The PDF and document routes over one parser pool; `close` stops the workers. */
export function createPdfFeature(deps: Pick<ServerDeps, 'caches' | 'config' | 'database' | 'log' | 'testSeams'>) {
  const pool = new ParserPool(deps.config.pdf, deps.log.child({ feature: 'pdf' }), deps.testSeams?.pdfWorkerModule);
  const service = new PdfService(deps, pool);
  deps.caches.register({
    name: 'pdf-workers',
    description: `PDF parser workers (${deps.config.pdf.engine})`,
    stats: () => {
      const { in_flight, running, starting, threads, completed } = pool.stats;
      return {
        entries: in_flight,
        max_entries: deps.config.pdf.workers + deps.config.pdf.maxPending,
        hits: completed,
        misses: 0,
        workers: { threads, starting, busy: running, waiting: in_flight - running },
      };
    },
  });

  // A queue place and the rate limit are decided before up to 16 MiB of body is read.
  const admitBeforeBody = (request: RequestContext) => service.admitBeforeBody(request);
  const pdf = defineHandlers(pdfContract, {
    extractUpload: withAdmission(admitBeforeBody, async ({ query, body }, request) => {
      const started = performance.now();
      await service.admit(request.principal, request);
      const bytes = await service.source({ kind: 'bytes', bytes: body }, request);
      const extraction = await service.extract(bytes, { startPage: query.start_page, maxPages: query.max_pages, maxChars: query.max_chars }, request, started);
      return { status: 200, body: extraction };
    }),
    // A small JSON body (a URL) is read before the queue is asked, so a refused URL is a 422 however busy the pool is.
    extract: withAdmission(
      (request) => service.admitBeforeJsonBody(request),
      async ({ body }, request) => {
        const started = performance.now();
        const source: PdfSource = body.url !== undefined ? { kind: 'url', url: body.url } : { kind: 'base64', data: body.data_base64 ?? '' };
        const release = await service.admitSource(source, request);
        try {
          const bytes = await service.source(source, request);
          const options = { startPage: body.start_page, maxPages: body.max_pages, maxChars: body.max_chars, password: body.password };
          if (body.stream) return { status: 200, body: service.stream(bytes, options, request, started) };
          return { status: 200, body: await service.extract(bytes, options, request, started) };
        } finally {
          // A parse that started took the place over; one that never started gives it back.
          release();
        }
      },
    ),
  });

  // A document's format, so whether it needs a worker, is in its body: a queue place is held from the head.
  const documents = defineHandlers(documentsContract, {
    extract: withAdmission(
      (request) => service.placeBeforeBody(request),
      async ({ body }, request) => ({ status: 200, body: await extractDocument(body, request, service, performance.now()) }),
    ),
  });

  return { handlers: { pdf, documents }, service, close: () => pool.close() } satisfies Feature<'pdf' | 'documents'>;
}
