import { jsonText, terminalSafe } from './terminal-safe.ts';

/**
 * Everything the CLI prints goes through here: data to stdout (JSON with `--json`, readable
 * text otherwise), progress and notices to stderr so piped output stays clean. Server-supplied
 * text never reaches a terminal raw (terminal-safe.ts): readable text shows control characters
 * as `^[`-style notation, and JSON escapes every C0 and C1 control.
 */
export class Output {
  readonly json: boolean;
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;

  constructor(options: { json: boolean; stdout?: NodeJS.WritableStream; stderr?: NodeJS.WritableStream }) {
    this.json = options.json;
    this.stdout = options.stdout ?? process.stdout;
    this.stderr = options.stderr ?? process.stderr;
  }

  /** Prints a result: the data as JSON with `--json`, else what `human` renders. */
  result<T>(data: T, human: (data: T) => string): void {
    this.stdout.write(this.json ? `${jsonText(data, 2)}\n` : `${terminalSafe(human(data))}\n`);
  }

  /** One JSON object per line with `--json` (streams), else the rendered line. */
  line<T>(data: T, human: (data: T) => string): void {
    this.stdout.write(this.json ? `${jsonText(data)}\n` : `${terminalSafe(human(data))}\n`);
  }

  /** A notice for the person at the terminal; never part of the data. */
  notice(message: string): void {
    this.stderr.write(`${terminalSafe(message)}\n`);
  }

  /**
   * Streamed text as it arrives (a chat answer's deltas, a PDF's pages). On a terminal its control
   * characters are shown, not sent; into a pipe or a file it is written exactly as the server sent it.
   */
  text(chunk: string): void {
    this.stdout.write((this.stdout as NodeJS.WriteStream).isTTY ? terminalSafe(chunk) : chunk);
  }

  /** A progress line redrawn in place on a terminal (`\r`, erase line): the line itself is made safe. */
  progress(line: string): void {
    this.stderr.write(`\r\x1b[2K${terminalSafe(line)}`);
  }

  /** True when stderr is a terminal (progress bars only then). */
  get interactive(): boolean {
    return Boolean((this.stderr as NodeJS.WriteStream).isTTY);
  }
}

/** The terminal's width when stdout is one; a pipe or a file gets whole lines. */
export function terminalColumns(stream: NodeJS.WritableStream = process.stdout): number {
  const tty = stream as NodeJS.WriteStream;
  return tty.isTTY && tty.columns > 0 ? tty.columns : Number.POSITIVE_INFINITY;
}

/**
 * Aligns rows of cells into columns. On a terminal each line is cut to its width with `…` (the
 * last column gives way, as gh's tables do), so a long description never wraps into the next row;
 * into a pipe or a file every cell is whole.
 */
export function table(rows: string[][], width = terminalColumns()): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, index) => (widths[index] = Math.max(widths[index] ?? 0, cell.length)));
  const fit = (line: string) => (line.length > width ? `${line.slice(0, Math.max(0, width - 1))}…` : line);
  return rows.map((row) => fit(row.map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index]!))).join('  '))).join('\n');
}
