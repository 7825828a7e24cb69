import { z } from 'zod';
import { pdfLimits } from './limits.ts';
import { DocumentMetadata, ExtractionWarning, maxChars, maxPages, startPage, TruncationReason } from './extraction.ts';

export const DocumentFormat = z.enum(['html', 'markdown', 'text', 'docx', 'pdf']).meta({ id: 'DocumentFormat' });
export type DocumentFormat = z.infer<typeof DocumentFormat>;

/**
 * One section of a document: the text under one heading (HTML h1-h6, Markdown `#`, DOCX heading
 * styles), or one page of a PDF. Text before the first heading is a section with a null heading.
 */
export const DocumentSection = z
  .object({
    section_number: z.number().int().min(1).describe('One-based position in the document.'),
    heading: z
      .string()
      .nullable()
      .describe(`The heading's text, cut to its first ${pdfLimits.maxHeadingChars} characters; null for text before any heading and for PDF pages.`),
    level: z.number().int().min(0).max(6).describe('Heading level 1-6; 0 for text before any heading and for PDF pages.'),
    page_number: z.number().int().min(1).nullable().describe('The PDF page this section is; null for other formats.'),
    text: z.string().describe('Text of the section without its heading, normalised like PDF pages.'),
    char_count: z.number().int().nonnegative(),
  })
  .meta({ id: 'DocumentSection' });
export type DocumentSection = z.infer<typeof DocumentSection>;

export const DocumentExtraction = z
  .object({
    format: DocumentFormat,
    section_count: z.number().int().nonnegative().describe('Sections (or PDF pages) in the whole document.'),
    sections_returned: z.number().int().nonnegative(),
    char_count: z.number().int().nonnegative(),
    truncated: z.boolean(),
    truncated_reason: TruncationReason.nullable(),
    metadata: DocumentMetadata,
    warnings: z.array(ExtractionWarning),
    sections: z.array(DocumentSection),
  })
  .meta({ id: 'DocumentExtraction' });
export type DocumentExtraction = z.infer<typeof DocumentExtraction>;

export const DocumentExtractRequest = z
  .strictObject({
    text: z.string().max(16_777_216).optional().describe('The document as text: HTML, Markdown or plain text.'),
    data_base64: z.base64().optional().describe('The document bytes, base64: DOCX or PDF (text formats are accepted too, as UTF-8).'),
    format: DocumentFormat.optional().describe('What the document is; detected from the bytes, the filename and the text when absent.'),
    filename: z.string().max(512).optional().describe('Original file name, used only to detect the format.'),
    start_page: startPage().describe('PDF only: first page.'),
    max_pages: maxPages().describe('PDF only: most pages.'),
    max_chars: maxChars(),
  })
  .refine((body) => (body.text === undefined) !== (body.data_base64 === undefined), { message: 'Send exactly one of text and data_base64.', path: ['text'] })
  .meta({ id: 'DocumentExtractRequest' });
export type DocumentExtractRequest = z.input<typeof DocumentExtractRequest>;
