/**
 * Everything the CLI prints goes through here: data to stdout (JSON with `--json`, readable
 * text otherwise), progress and notices to stderr so piped output stays clean.
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
    this.stdout.write(this.json ? `${JSON.stringify(data, null, 2)}\n` : `${human(data)}\n`);
  }

  /** One JSON object per line with `--json` (streams), else the rendered line. */
  line<T>(data: T, human: (data: T) => string): void {
    this.stdout.write(this.json ? `${JSON.stringify(data)}\n` : `${human(data)}\n`);
  }

  /** A notice for the person at the terminal; never part of the data. */
  notice(message: string): void {
    this.stderr.write(`${message}\n`);
  }

  /** True when stderr is a terminal (progress bars only then). */
  get interactive(): boolean {
    return Boolean((this.stderr as NodeJS.WriteStream).isTTY);
  }
}

/** Aligns rows of cells into columns. */
export function table(rows: string[][]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, index) => (widths[index] = Math.max(widths[index] ?? 0, cell.length)));
  return rows.map((row) => row.map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index]!))).join('  ')).join('\n');
}
