import { readFile } from 'node:fs/promises';
import { UsageError } from './failure.ts';

/** A compact JWS on its own: three base64url parts. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** Where a saved answer keeps its receipt: a completion's `receipt`, a key event's `signed_receipt`, a board value's `receipt.jws`. */
function receiptInJson(value: unknown): string | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const record = value as Record<string, unknown>;
  for (const field of ['receipt', 'signed_receipt', 'jws']) {
    const candidate = record[field];
    if (typeof candidate === 'string' && COMPACT_JWS.test(candidate.trim())) return candidate.trim();
  }
  return receiptInJson(record.receipt) ?? receiptInJson(record.completion);
}

/**
 * A receipt given on the command line: the compact JWS itself, or a file holding it (alone, or in
 * a saved JSON answer: a download completion, a developer-key receipt, a board value).
 */
export async function readReceipt(argument: string): Promise<string> {
  if (COMPACT_JWS.test(argument.trim())) return argument.trim();
  let text: string;
  try {
    text = await readFile(argument, 'utf8');
  } catch (error) {
    throw new UsageError(`"${argument}" is neither a receipt (a compact JWS) nor a readable file: ${(error as Error).message}`);
  }
  if (COMPACT_JWS.test(text.trim())) return text.trim();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError(`${argument} holds neither a receipt (a compact JWS) nor JSON with one.`);
  }
  const found = receiptInJson(parsed);
  if (!found) throw new UsageError(`${argument} is JSON without a receipt: expected a "receipt", "signed_receipt" or "jws" field holding a compact JWS.`);
  return found;
}
