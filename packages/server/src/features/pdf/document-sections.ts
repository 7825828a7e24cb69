import type { DocumentFormat } from '@svc/schemas';

/** A heading and the text under it, before limits are applied. */
export interface RawSection {
  heading: string | null;
  level: number;
  text: string;
}

export interface SectionedDocument {
  sections: RawSection[];
  /** Sections in the whole document, when only the first `pdfLimits.maxDocumentSections` were kept. */
  sectionCount?: number;
  title?: string;
  /**
   * The headings and the title are not normalised yet (HTML's, whose text normaliseText turns
   * into one line): normalising 16 MiB of them at once held the event loop for a second.
   */
  headingsToNormalise?: true;
  author?: string;
  language?: string;
}

export function sectionPlainText(text: string): SectionedDocument {
  return { sections: [{ heading: null, level: 0, text }] };
}

/**
 * detectFormat for a document sent as text, without encoding all of it: only its head is read,
 * and a NUL byte can only come from a NUL character.
 */
export function detectTextFormat(text: string, declared: DocumentFormat | undefined, filename: string | undefined): DocumentFormat | undefined {
  if (declared) return declared;
  // 4,097 characters encode to at least the 4,096 bytes read, the same bytes as the whole text's
  // (the extra character keeps a surrogate pair at the edge whole).
  const head = Buffer.from(text.slice(0, HEAD_BYTES + 1), 'utf8');
  return detectFormat(head, undefined, filename, () => text.includes('\0'));
}

const HEAD_BYTES = 4096;

/** Decides the format from what was said, the file name, and the first bytes. */
export function detectFormat(
  bytes: Buffer,
  declared: DocumentFormat | undefined,
  filename: string | undefined,
  holdsNul = () => bytes.includes(0),
): DocumentFormat | undefined {
  if (declared) return declared;
  if (bytes.subarray(0, 1024).includes('%PDF-')) return 'pdf';
  if (bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04) return filename && !/\.docx$/i.test(filename) ? undefined : 'docx';
  const extension = filename?.toLowerCase().match(/\.([a-z0-9]+)$/)?.[1];
  if (extension === 'md' || extension === 'markdown') return 'markdown';
  if (extension === 'html' || extension === 'htm' || extension === 'xhtml') return 'html';
  if (extension === 'txt' || extension === 'text') return 'text';
  if (holdsNul()) return undefined;
  const head = bytes.subarray(0, HEAD_BYTES).toString('utf8').trimStart().toLowerCase();
  if (head.startsWith('<!doctype html') || head.startsWith('<html') || /<(body|p|div|h[1-6])[\s>]/.test(head)) return 'html';
  if (/^(#{1,6}\s|```)/m.test(head) || /^.+\n(?:=+|-+)[^\S\n]*$/m.test(head)) return 'markdown';
  return 'text';
}
