/**
 * Text normalisation for retrieval, shared by every engine and by document extraction.
 * Self-contained: the parser workers load it, so it imports nothing from the server.
 */

const LIGATURES: Record<string, string> = {
  '\uFB00': 'ff',
  '\uFB01': 'fi',
  '\uFB02': 'fl',
  '\uFB03': 'ffi',
  '\uFB04': 'ffl',
  '\uFB05': 'st',
  '\uFB06': 'st',
  '\u0132': 'IJ',
  '\u0133': 'ij',
  '\u0152': 'OE',
  '\u0153': 'oe',
};
const LIGATURE_PATTERN = new RegExp(`[${Object.keys(LIGATURES).join('')}]`, 'g');

/**
 * - ligatures expanded (`ﬁ` -> `fi`), so words match what people type;
 * - soft hyphens, zero-width characters and stray NULs dropped; no-break spaces become spaces;
 * - a word broken by a hyphen at a line end is joined (`retrie-\nval` -> `retrieval`) when the
 *   next line starts in lower case, which is what hyphenation looks like;
 * - runs of spaces become one, lines are trimmed, more than one blank line becomes one.
 * Line breaks stay: they carry structure (lists, tables, code) a chunker may want.
 */
export function normaliseText(input: string): string {
  return normaliseTextUntrimmed(input).trim();
}

/** All of normaliseText but the final trim: for a long text normalised a piece at a time. */
export function normaliseTextUntrimmed(input: string): string {
  return input
    .replace(/\r\n?/g, '\n')
    .replace(LIGATURE_PATTERN, (ligature) => LIGATURES[ligature] ?? ligature)
    .replace(/[\u00AD\u200B-\u200D\u2060\uFEFF\u0000]/g, '')
    .replace(/[\u00A0\u2000-\u200A\u202F\u205F\u3000\t\f\v]/g, ' ')
    .replace(/(\p{L})[-\u2010\u2011] *\n\s*(\p{Ll})/gu, '$1$2')
    .replace(/ {2,}/g, ' ')
    .replace(/(?:(?<! ) +)?\n */g, '\n')
    .replace(/\n{3,}/g, '\n\n');
}
