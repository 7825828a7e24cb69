import type { ResponseInputItem } from '@svc/schemas';
import { newItemId } from './response-ids.ts';

/** An item of a conversation as svc stores it: the caller's item in its full form, with an id. */
export type ConversationItem = Record<string, unknown> & { type: string; id: string };

const idKind = (type: string) => (type === 'message' ? 'msg' : type === 'function_call' ? 'fc' : type === 'function_call_output' ? 'fco' : 'item');

/**
 * The request's `input` as items in their full form, each with an id: a string is one user
 * message, a message's string content becomes one text part, and an item without `type` that
 * has a `role` is a message (OpenAI's "easy" input). This is what is stored, listed by
 * `input_items` and replayed by `previous_response_id`.
 */
export function normaliseInput(input: string | readonly ResponseInputItem[] | undefined): ConversationItem[] {
  if (input === undefined) return [];
  if (typeof input === 'string') return [{ id: newItemId('msg'), type: 'message', role: 'user', content: [{ type: 'input_text', text: input }] }];
  return input.map((item) => {
    const type = item.type ?? (item.role !== undefined ? 'message' : 'unknown');
    const full: Record<string, unknown> = { ...item, type };
    if (type === 'message' && typeof full.content === 'string')
      full.content = [{ type: item.role === 'assistant' ? 'output_text' : 'input_text', text: full.content }];
    if (typeof full.id !== 'string' || full.id === '') full.id = newItemId(idKind(type));
    return full as ConversationItem;
  });
}

/** Where an item came from, for a refusal that names it: the request's `input[i]`, or the stored conversation of `previous_response_id`. */
export interface PlacedItem {
  item: ConversationItem;
  path: ReadonlyArray<string | number>;
}

export function placed(history: readonly ConversationItem[], input: readonly ConversationItem[]): PlacedItem[] {
  return [
    ...history.map((item, index) => ({ item, path: ['previous_response_id', index] })),
    ...input.map((item, index) => ({ item, path: ['input', index] })),
  ];
}
