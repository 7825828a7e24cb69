import { z } from 'zod';
import { defineContract, defineRoute, jsonOrSse } from '../route.ts';
import { DocumentExtraction, DocumentExtractRequest } from './documents.ts';
import { PdfExtraction, PdfExtractQuery, PdfExtractRequest, PdfStreamEvent, pdfStreamEventNames } from './extraction.ts';
import { pdfJsonBodyLimitBytes, pdfLimits } from './limits.ts';

const invoke = { auth: { kind: 'scoped', scopes: ['inference:invoke'] }, surface: 'base' } as const;

export const pdfContract = defineContract({
  extractUpload: defineRoute({
    ...invoke,
    tags: ['pdf'],
    method: 'POST',
    path: '/v1/pdf/extract/upload',
    summary: 'Extract page-aligned text from raw PDF bytes',
    description:
      'Body: the PDF bytes (`application/pdf` or `application/octet-stream`; multipart is refused with 415). ' +
      `At most ${pdfLimits.maxFileBytes} bytes (413), read within ${pdfLimits.uploadTimeoutMs / 1000} s (408). ` +
      `Parsed by one of ${pdfLimits.parserWorkers} workers; at most ${pdfLimits.maxPendingRequests} requests wait, ` +
      `${pdfLimits.queueTimeoutMs / 1000} s at most (503), and a parse that takes more than ${pdfLimits.parseTimeoutMs / 1000} s is stopped (504). ` +
      'The queue place (503 `pdf_queue_full`) and the rate limit (429 `rate_limited`) are decided from the request head, before a byte of the body is read. ' +
      'Errors answer the BayRunErrorEnvelope. `Server-Timing` reports admission_ms, upload_read_ms, source_ms, staging_ms, worker_start_ms, worker_queue_ms, worker_roundtrip_ms, executor_dispatch_ms and total_ms.',
    query: PdfExtractQuery,
    body: z.any().describe('The raw PDF bytes.'),
    bodyEncoding: 'bytes',
    bodyMediaTypes: ['application/pdf', 'application/octet-stream'],
    bodyLimitBytes: pdfLimits.maxFileBytes,
    bodyTimeoutMs: pdfLimits.uploadTimeoutMs,
    errorEnvelope: 'bayrun',
    errors: [400, 408, 413, 415, 429, 503, 504],
    responses: { 200: PdfExtraction },
  }),
  extract: defineRoute({
    ...invoke,
    tags: ['pdf'],
    method: 'POST',
    path: '/v1/pdf/extract',
    summary: 'Extract page-aligned text from a PDF given as base64 or an https URL; stream pages with `stream: true`',
    description:
      'Same limits and answer as the upload route. With `stream: true` the answer is a server-sent event stream: ' +
      '`page-extracted` (an ExtractedPage) per page as it is extracted, then `extraction-completed` (a PdfExtractionSummary); ' +
      'a failure after the stream started ends it with an `error` event ({ code, error }).',
    body: PdfExtractRequest,
    bodyLimitBytes: pdfJsonBodyLimitBytes,
    bodyTimeoutMs: pdfLimits.uploadTimeoutMs,
    errorEnvelope: 'bayrun',
    errors: [408, 413, 429, 503, 504],
    responses: { 200: jsonOrSse(PdfExtraction, PdfStreamEvent) },
    // An MCP tool call with a progressToken reports each page as it is extracted.
    agent: {
      progress: {
        stream: { itemEvent: pdfStreamEventNames.page, itemsField: 'pages', finalEvent: pdfStreamEventNames.completed, errorEvent: pdfStreamEventNames.error },
      },
    },
  }),
});

export const documentsContract = defineContract({
  extract: defineRoute({
    ...invoke,
    tags: ['documents'],
    method: 'POST',
    path: '/v1/document/extract',
    summary: 'Extract section-aligned text from HTML, Markdown, plain text, DOCX or PDF',
    description: `Headings become sections (heading, level, text). PDFs are extracted by the PDF workers, one section per page, under the same limits. At most ${pdfLimits.maxDocumentSections} sections are answered (\`truncated_reason: max_sections\`); \`section_count\` still counts them all. A heading, and the title taken from one, is cut to its first ${pdfLimits.maxHeadingChars} characters.`,
    body: DocumentExtractRequest,
    bodyLimitBytes: pdfJsonBodyLimitBytes,
    bodyTimeoutMs: pdfLimits.uploadTimeoutMs,
    errors: [408, 413, 429, 503, 504],
    responses: { 200: DocumentExtraction },
  }),
});
