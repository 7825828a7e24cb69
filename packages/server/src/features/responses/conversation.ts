import { responsesLimits, type ResponsesCreateBody } from '@svc/schemas';
import { normaliseInput, placed, refuse, type ConversationItem, type PlacedItem } from './translation/index.ts';
import type { ResponseStore } from './response-store.ts';

/** The conversation one request continues and adds to. */
export interface Conversation {
  /** Everything before this request: the previous response's context, input and output. */
  history: ConversationItem[];
  /** This request's own input, with ids. */
  input: ConversationItem[];
  /** Both, each with where it came from (for refusals that name the item). */
  items: PlacedItem[];
  /** `input` as the JSON text a stored response keeps, made once on first ask: measured against the cap, written as it is. */
  inputJson(): string;
}

/**
 * Reads `previous_response_id` (the caller's own, fresh, or 404) and the request's input into one
 * conversation: the stored items come first, then the new input. Works on any replica: the
 * previous response's context is one row.
 */
export async function gatherConversation(store: ResponseStore, owner: string, body: ResponsesCreateBody): Promise<Conversation> {
  const input = normaliseInput(body.input);
  // Serialised only when a continuation is measured or a response stored, and then once.
  let json: string | undefined;
  const inputJson = () => {
    json ??= JSON.stringify(input);
    return json;
  };
  if (body.previous_response_id) {
    // Sized in the database before the row is read: a conversation past the cap is never parsed
    // here. The stored row of this request holds the previous one and this input (and its own
    // output), so both count: a chain cannot grow a row past the cap a step at a time.
    const stored = await store.size(owner, body.previous_response_id);
    const bytes = stored + Buffer.byteLength(inputJson());
    if (bytes > responsesLimits.maxConversationBytes) {
      throw refuse(
        'responses_input_unsupported',
        ['previous_response_id'],
        `the stored conversation holds ${stored} bytes, and with this input ${bytes}, more than ${responsesLimits.maxConversationBytes}: start a new one.`,
      );
    }
  }
  const previous = body.previous_response_id ? await store.get(owner, body.previous_response_id) : undefined;
  const history = previous ? [...previous.context, ...previous.inputItems, ...(previous.response.output as ConversationItem[])] : [];
  if (history.length + input.length > responsesLimits.maxConversationItems) {
    throw refuse(
      'responses_input_unsupported',
      ['input'],
      `the conversation would hold ${history.length + input.length} items, more than ${responsesLimits.maxConversationItems}: start a new one.`,
    );
  }
  if (input.length === 0 && history.length === 0 && !body.instructions)
    throw refuse('responses_input_unsupported', ['input'], 'send input (a string or items) or instructions.');
  return { history, input, items: placed(history, input), inputJson };
}

/**
 * Items as an upstream that speaks Responses gets them: without the ids svc gave them. An upstream
 * asked not to store (svc keeps the conversation) may refuse ids it never issued; a reasoning item
 * keeps its id, which its encrypted content is bound to.
 */
export function itemsForUpstream(conversation: Conversation): Array<Record<string, unknown>> {
  return [...conversation.history, ...conversation.input].map((item) => {
    if (item.type === 'reasoning') return item;
    const { id: _svcId, ...rest } = item;
    return rest;
  });
}
