import type { DocumentExtraction, DocumentFormat, ExtractedPage, PdfExtraction, PdfExtractionSummary } from '@svc/schemas';
import { errorFromResponse, SvcError } from '../errors.ts';
import type { CallOptions } from '../transport.ts';
import type { ClientOf } from '../derive.ts';
import type { Contract } from '@svc/schemas';
import { fileNameOf, readAllBytes, toBase64, toUploadBody, type FileInput } from './pdf-input.ts';

export interface PdfBounds {
  /** First page, one-based (default 1). */
  startPage?: number;
  /** Most pages (1..100, default 32). */
  maxPages?: number;
  /** Most characters over all pages (1..400000, default 200000). */
  maxChars?: number;
}

export interface StreamPagesOptions extends PdfBounds, CallOptions {
  /** Password of an encrypted PDF. */
  password?: string;
}

/** Pages as they are extracted; `summary` is set once the stream has ended normally. */
export interface PdfPageStream extends AsyncIterable<ExtractedPage> {
  summary: PdfExtractionSummary | undefined;
}

export interface PdfHelpers {
  /**
   * Extracts a PDF through the upload route: a path is streamed from disk, bytes and streams are
   * sent as they are. Errors are typed (`PayloadTooLargeError`, `ValidationError` with code
   * `pdf_invalid` or `pdf_encrypted`, `ServiceUnavailableError`, `GatewayTimeoutError`).
   *
   * @example
   * ```ts
   * const result = await svc.pdf.extractFile('manual.pdf', { maxPages: 10 });
   * for (const page of result.pages) process.stdout.write(`${page.page_number}: ${page.text.slice(0, 80)}\n`);
   * ```
   */
  extractFile(input: FileInput, options?: PdfBounds & CallOptions): Promise<PdfExtraction>;
  /**
   * Streams pages as the server extracts them (server-sent events). Breaking out of the loop
   * aborts the request, and the server stops the parse.
   *
   * @example
   * ```ts
   * const pages = svc.pdf.streamPages('manual.pdf', { maxPages: 100 });
   * for await (const page of pages) process.stdout.write(`${page.page_number}: ${page.char_count} characters\n`);
   * process.stdout.write(`${pages.summary?.page_count} pages\n`);
   * ```
   */
  streamPages(input: FileInput | { url: string }, options?: StreamPagesOptions): PdfPageStream;
}

export interface DocumentHelpers {
  /**
   * Extracts sections from a document file: HTML, Markdown and text go as text, DOCX and PDF
   * as base64. The format is told from the file name and the content unless given.
   *
   * @example
   * ```ts
   * const doc = await svc.documents.extractFile('notes.md');
   * for (const section of doc.sections) process.stdout.write(`${section.level} ${section.heading}\n`);
   * ```
   */
  extractFile(
    input: FileInput,
    options?: { format?: DocumentFormat; filename?: string; maxChars?: number } & PdfBounds & CallOptions,
  ): Promise<DocumentExtraction>;
}

const queryOf = (options: PdfBounds) => ({ start_page: options.startPage, max_pages: options.maxPages, max_chars: options.maxChars });
const callOptionsOf = ({ signal, timeout, headers, idempotencyKey, retry }: CallOptions): CallOptions => ({ signal, timeout, headers, idempotencyKey, retry });
const TEXT_FORMATS = new Set(['html', 'markdown', 'text']);

export function createPdfHelpers(methods: ClientOf<Contract>): PdfHelpers {
  return {
    async extractFile(input, options = {}) {
      const body = await toUploadBody(input);
      return methods.pdf.extractUpload({ query: queryOf(options), body }, callOptionsOf(options));
    },
    streamPages(input, options = {}) {
      const stream: PdfPageStream = {
        summary: undefined,
        async *[Symbol.asyncIterator]() {
          const source =
            typeof input === 'object' && input !== null && 'url' in input && typeof input.url === 'string' && !(input instanceof URL)
              ? { url: input.url }
              : { data_base64: toBase64(await readAllBytes(input as FileInput)) };
          const answer = await methods.pdf.extract(
            { body: { ...source, ...queryOf(options), password: options.password, stream: true } },
            callOptionsOf(options),
          );
          if (!(Symbol.asyncIterator in Object(answer)))
            throw new SvcError('The server answered JSON where an event stream was asked for.', { code: 'unexpected_response' });
          for await (const message of answer as AsyncIterable<{ event: string; data: unknown }>) {
            if (message.event === 'page-extracted') yield message.data as ExtractedPage;
            else if (message.event === 'extraction-completed') stream.summary = message.data as PdfExtractionSummary;
            else if (message.event === 'error') {
              const data = message.data as { code?: string; error?: string };
              throw errorFromResponse(statusOfCode(data.code), new Headers(), { error: data.error, code: data.code });
            }
          }
        },
      };
      return stream;
    },
  };
}

export function createDocumentHelpers(methods: ClientOf<Contract>): DocumentHelpers {
  return {
    async extractFile(input, options = {}) {
      const bytes = await readAllBytes(input);
      const filename = options.filename ?? fileNameOf(input);
      const format = options.format ?? formatFromName(filename);
      const asText = format !== undefined && TEXT_FORMATS.has(format);
      return methods.documents.extract(
        {
          body: {
            ...(asText ? { text: new TextDecoder().decode(bytes) } : { data_base64: toBase64(bytes) }),
            ...(format ? { format } : {}),
            ...(filename ? { filename } : {}),
            ...queryOf(options),
          },
        },
        callOptionsOf(options),
      );
    },
  };
}

function formatFromName(name: string | undefined): DocumentFormat | undefined {
  const extension = name?.toLowerCase().match(/\.([a-z0-9]+)$/)?.[1];
  return ({ md: 'markdown', markdown: 'markdown', html: 'html', htm: 'html', txt: 'text', docx: 'docx', pdf: 'pdf' } as const)[extension ?? ''] as
    | DocumentFormat
    | undefined;
}

/** An error that arrives inside a stream has no status line; its code still says which it is. */
function statusOfCode(code: string | undefined): number {
  if (!code) return 500;
  if (code === 'pdf_parse_timeout') return 504;
  if (/^pdf_(queue|worker)/.test(code)) return 503;
  if (/^(pdf_|document_|source_)/.test(code)) return 422;
  return 500;
}
