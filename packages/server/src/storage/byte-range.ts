/** The bytes `start..end` (inclusive) of an object, as a `Range` request names them. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * Reads one `Range: bytes=…` header against an object of `size` bytes, as GCS answers it:
 * - `undefined`: no range to honour (no header, another unit, several ranges, or a form this
 *   parser does not read), so the whole object is sent with 200, which RFC 9110 allows;
 * - `'unsatisfiable'`: a well-formed single range that starts at or past the end (416);
 * - otherwise the range, its end clamped to the last byte (`bytes=N-` reads to the end,
 *   `bytes=-N` the last N bytes).
 */
export function parseByteRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | undefined {
  if (header === undefined) return undefined;
  // Split rather than one pattern with optional spaces around optional digits, which backtracks
  // polynomially (regexp/no-super-linear-backtracking): every step here is linear.
  const unit = /^bytes\s*=/i.exec(header.trim());
  if (!unit) return undefined;
  const spec = header.trim().slice(unit[0].length);
  const dash = spec.indexOf('-');
  if (dash < 0 || spec.includes('-', dash + 1)) return undefined;
  const first = spec.slice(0, dash).trim();
  const last = spec.slice(dash + 1).trim();
  if (!/^\d*$/.test(first) || !/^\d*$/.test(last)) return undefined;
  if (first === '' && last === '') return undefined;
  if (first === '') {
    // A suffix: the last N bytes; a suffix of 0 bytes selects nothing.
    const length = Number(last);
    if (length === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - length), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (last !== '' && Number(last) < start) return undefined; // invalid: ignored, as RFC 9110 says
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}
