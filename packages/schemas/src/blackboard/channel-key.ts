import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';

/** Canonical tasks of the board (spec 2.1). */
export const canonicalTasks = ['toxicity', 'sentiment', 'prompt_injection', 'tickets', 'rerank', 'embeddings', 'nli', 'other'] as const;
export type CanonicalTask = (typeof canonicalTasks)[number];

/** Known aliases; they normalise `value.task` only and never rewrite a raw key prefix. */
export const taskAliases: Readonly<Record<string, CanonicalTask>> = {
  guard: 'prompt_injection',
  injection: 'prompt_injection',
  moderation: 'toxicity',
  toxic: 'toxicity',
  rag: 'rerank',
  retrieval: 'rerank',
  embedding: 'embeddings',
  support: 'tickets',
  ticket: 'tickets',
};

/** The canonical task for a canonical name or alias (case and surrounding space ignored); undefined when unknown. */
export function normaliseTask(task: string): CanonicalTask | undefined {
  const token = task.trim().toLowerCase();
  if ((canonicalTasks as readonly string[]).includes(token)) return token as CanonicalTask;
  return taskAliases[token];
}

/** Lower-cased, runs of whitespace collapsed to one space, trimmed: what the derived key hashes. */
export function normaliseKeyInput(input: string): string {
  return input.toLowerCase().replace(/\s+/g, ' ').trim();
}

/**
 * The channel key agents on the same task and input meet on: the raw task token, a colon, and
 * the first 24 hex characters of the SHA-256 of the normalised input. The server computes the
 * same key for `key_from`, so a client can find a channel before posting to it.
 *
 * @example
 * ```ts
 * deriveChannelKey('Is this  text toxic?', 'moderation'); // 'moderation:…24 hex…'
 * ```
 */
export function deriveChannelKey(input: string, task: string = 'other'): string {
  // A pure-JS SHA-256 (not node:crypto), so browsers derive the same keys.
  const digest = bytesToHex(sha256(utf8ToBytes(normaliseKeyInput(input))));
  return `${task.trim()}:${digest.slice(0, 24)}`;
}
