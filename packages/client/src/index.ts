export { createClient, createContractClient, type SvcClient, type ClientOf, type ClientMethod } from './client.ts';
export { Transport, resolveOptions, type ClientOptions, type CallOptions, type RetryOptions, type RawResult } from './transport.ts';
export * from './errors.ts';
export { readSse } from './sse.ts';
export { fillPath, toSearchParams } from './path.ts';
export { SVC_VERSION } from '@svc/schemas';
export type { PdfBounds, PdfHelpers, DocumentHelpers, PdfPageStream, StreamPagesOptions } from './pdf/pdf-helpers.ts';
export type { FileInput } from './pdf/pdf-input.ts';
