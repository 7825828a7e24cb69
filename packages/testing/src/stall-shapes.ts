/**
 * Text shapes that make naive code stall when repeated: regexes that backtrack (a run of `a` then
 * `!`, long space runs, `://`, `a.`), Markdown scanners (`![`, `**a `, `#` then spaces), HTML
 * parsers (unclosed and nested tags), tokenizers (one long token), and the characters a database
 * refuses (NUL, lone surrogates). Shared by the stall suite and the fuzzer's string generators.
 */

/** A repeated unit between an optional head and tail; `stallText` sizes it. */
export interface StallShape {
  name: string;
  head?: string;
  unit: string;
  tail?: string;
  /** Backtracking needs no length: this shape also goes into short members (a 40-character task name). */
  short?: true;
}

export const STALL_SHAPES: readonly StallShape[] = [
  { name: 'a-run then !', unit: 'a', tail: '!', short: true },
  { name: '![ runs', unit: '![' },
  { name: '**a runs', unit: '**a ' },
  { name: 'space run', head: 'a', unit: ' ', tail: 'x', short: true },
  { name: ':// runs', unit: '://', short: true },
  { name: 'a. runs', unit: 'a.', short: true },
  { name: '# + spaces', head: '# a', unit: ' ', tail: 'x' },
  { name: 'unclosed <div> nest', unit: '<div>' },
  { name: 'unclosed <a runs', unit: '<a' },
  { name: '[ and > nest', unit: '> [' },
  { name: 'long token', unit: 'Zq9' },
  { name: 'NUL runs', unit: 'a\u0000' },
  { name: 'lone surrogates', unit: 'x\ud800' },
];

/** The shape in `length` UTF-16 units: its head, the unit repeated, its tail. */
export function stallText(shape: StallShape, length: number): string {
  const head = shape.head ?? '';
  const tail = shape.tail ?? '';
  const room = Math.max(0, length - head.length - tail.length);
  return `${head}${shape.unit.repeat(Math.ceil(room / shape.unit.length)).slice(0, room)}${tail}`.slice(0, Math.max(length, 0));
}
