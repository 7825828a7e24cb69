import type { PdfEngineName } from '@svc/schemas';

export type { PdfEngineName };

/**
 * What a PDF engine does inside a parser worker. Self-contained (no server imports; the engine
 * names come from the contract as a type only): workers load it.
 * Engines raise PdfEngineError with one of these codes; anything else is reported as unreadable.
 */
export type PdfEngineErrorCode = 'pdf_invalid' | 'pdf_encrypted' | 'pdf_password_incorrect' | 'pdf_too_complex';

export class PdfEngineError extends Error {
  readonly code: PdfEngineErrorCode;
  constructor(code: PdfEngineErrorCode, message: string) {
    super(message);
    this.name = 'PdfEngineError';
    this.code = code;
  }
}

export interface EngineMetadata {
  title?: string;
  author?: string;
  subject?: string;
  keywords?: string;
  creator?: string;
  producer?: string;
  creation_date?: string;
  modification_date?: string;
  pdf_version?: string;
  language?: string;
}

/** Between two lines, a baseline jump of more than this many line heights (font sizes) starts a paragraph: every engine uses it. */
export const PARAGRAPH_GAP_LINES = 1.6;

export interface EnginePage {
  /** Raw text with line breaks (`\n`) and paragraph breaks (`\n\n`); normalised by the caller. */
  text: string;
  width: number;
  height: number;
  rotation: number;
}

/** An opened document. Pages are read one at a time so a page limit stops the work. */
export interface OpenedPdf {
  readonly pageCount: number;
  metadata(): Promise<EngineMetadata>;
  page(pageNumber: number): Promise<EnginePage>;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** The worker's memory cap: an engine with its own heap (WASM) keeps that heap under it. */
  memoryLimitBytes?: number;
}

export interface PdfEngine {
  readonly name: PdfEngineName;
  open(bytes: Uint8Array, password: string | undefined, options?: OpenOptions): Promise<OpenedPdf>;
}

/** PDF dates look like `D:20240131120000+01'00'`; answers ISO 8601 or undefined. */
export function pdfDateToIso(value: string | undefined | null): string | undefined {
  if (!value) return undefined;
  const match = /^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(?:([Zz+-])(\d{2})?'?(\d{2})?'?)?/.exec(value.trim());
  if (!match) return undefined;
  const [, y, mo = '01', d = '01', h = '00', mi = '00', s = '00', sign, oh = '00', om = '00'] = match;
  const offset = !sign || sign === 'Z' || sign === 'z' ? 'Z' : `${sign}${oh}:${om}`;
  const iso = `${y}-${mo}-${d}T${h}:${mi}:${s}${offset}`;
  return Number.isNaN(Date.parse(iso)) ? undefined : new Date(iso).toISOString();
}

/** The Info-dictionary fields every engine reads the same way, given a lookup by key. */
export function infoDictionaryMetadata(field: (key: string) => string | undefined): Record<string, string | undefined> {
  return {
    title: field('Title'),
    author: field('Author'),
    subject: field('Subject'),
    keywords: field('Keywords'),
    creator: field('Creator'),
    producer: field('Producer'),
    creation_date: pdfDateToIso(field('CreationDate')),
    modification_date: pdfDateToIso(field('ModDate')),
  };
}

/** Drops empty and non-string metadata values so the answer only states what the file states. */
export function cleanMetadata(metadata: Record<string, string | undefined>): EngineMetadata {
  return Object.fromEntries(
    Object.entries(metadata)
      .map(([key, value]) => [key, typeof value === 'string' ? value.replace(/\u0000/g, '').trim() : undefined] as const)
      .filter(([, value]) => value !== undefined && value !== ''),
  ) as EngineMetadata;
}
