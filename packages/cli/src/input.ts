import { readFile } from 'node:fs/promises';
import { UsageError } from './failure.ts';

/** All of standard input as UTF-8. */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The text a command works on, from exactly one place: its words, a file (`-` is stdin), or
 * stdin when it is piped. `what` names the input in the usage error.
 */
export async function textFrom(words: readonly string[], file: string | undefined, what = 'the text'): Promise<string> {
  if (words.length > 0 && file !== undefined) throw new UsageError(`Give ${what} as an argument or with --file, not both.`);
  if (words.length > 0) return words.join(' ');
  if (file !== undefined && file !== '-') return readFile(file, 'utf8');
  if (file === '-' || !process.stdin.isTTY) return readStdin();
  throw new UsageError(`Give ${what} as an argument, with --file PATH, or on stdin.`);
}

/** A whole number from a flag, or a usage error naming the flag. */
export function integerFlag(name: string, value: string | undefined, bounds: { min?: number; max?: number } = {}): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`${name} takes a whole number, not ${JSON.stringify(value)}`);
  const number = Number(value);
  if ((bounds.min !== undefined && number < bounds.min) || (bounds.max !== undefined && number > bounds.max))
    throw new UsageError(`${name} takes a number from ${bounds.min ?? 0} to ${bounds.max ?? 'any'}`);
  return number;
}
