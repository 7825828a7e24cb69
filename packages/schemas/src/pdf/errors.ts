import type { ErrorCodeTable } from '../feature-contract.ts';

/** The error codes the pdf feature raises (docs/pdf.md); the root merges them into `errorCodes`. */
export const pdfErrors = {
  pdf_invalid: 422,
  pdf_encrypted: 422,
  pdf_password_incorrect: 422,
  pdf_too_complex: 422,
  pdf_queue_full: 503,
  pdf_queue_timeout: 503,
  pdf_worker_unavailable: 503,
  pdf_parse_timeout: 504,
  source_url_refused: 422,
  source_fetch_failed: 422,
  document_invalid: 422,
  document_format_unknown: 422,
} as const satisfies ErrorCodeTable;
