import type { ChatCompletionChunk, InferenceUsage, ResponseObject, ResponseOutputItem, ResponseStreamEvent } from '@svc/schemas';
import { withWireJson } from '../../../http/sse.ts';
import { ServiceError } from '../../../service-error.ts';
import { functionCallItem, incompleteReasonOf, messageItem } from './chat-to-response.ts';
import { newItemId } from './response-ids.ts';
import { responseObject, type ResponseFrame } from './response-frame.ts';
import { responseUsageFromChat } from './usage.ts';

interface OpenMessage {
  kind: 'message';
  id: string;
  outputIndex: number;
  text: string;
  refusal: string | undefined;
}
interface OpenCall {
  kind: 'call';
  id: string;
  outputIndex: number;
  callId: string;
  name: string;
  arguments: string;
}
type ChunkToolCall = { index?: number; id?: string; function?: { name?: string; arguments?: string } };

/**
 * Turns a Chat Completions stream, chunk by chunk, into the Responses API's events in OpenAI's
 * order, numbered by `sequence_number` from 0:
 *
 * response.created, response.in_progress; then per output item: output_item.added, and for a
 * message content_part.added, output_text.delta..., output_text.done, content_part.done, for a
 * function call function_call_arguments.delta..., function_call_arguments.done; output_item.done;
 * last response.completed, response.incomplete (the chat finish reason was `length` or
 * `content_filter`) or response.failed (the stream broke, with the code).
 *
 * An item is closed when the next one starts, as OpenAI sends them (one at a time). Only the
 * first choice is read: a Responses request asks for one.
 */
export class ChatStreamTranslator {
  readonly #frame: ResponseFrame;
  #sequence = 0;
  readonly #output: ResponseOutputItem[] = [];
  #open: OpenMessage | OpenCall | undefined;
  /** Tool calls by their chat index, to place each arguments delta; closed ones are kept to refuse a late delta. */
  readonly #calls = new Map<number, OpenCall>();
  #finishReason: string | null | undefined;
  #usage: InferenceUsage | undefined;
  #final: ResponseObject | undefined;
  #finalJson: string | undefined;

  constructor(frame: ResponseFrame) {
    this.#frame = frame;
  }

  /** The response as it ended (after `finish` or `fail`), to store and to report. */
  get final(): ResponseObject | undefined {
    return this.#final;
  }

  /** The usage the chat stream reported, once it did. */
  get usage(): InferenceUsage | undefined {
    return this.#usage;
  }

  /** The response as it ended, as JSON text: what the terminal event carries, and what `store` keeps (serialised once for both). */
  get finalJson(): string | undefined {
    return this.#finalJson;
  }

  start(events: ResponseStreamEvent[]): void {
    const snapshot = responseObject(this.#frame, { status: 'in_progress', output: [], usage: null, error: null });
    // The two events carry the same snapshot: serialised once.
    const json = JSON.stringify(snapshot);
    this.#emitResponse(events, 'response.created', snapshot, json);
    this.#emitResponse(events, 'response.in_progress', snapshot, json);
  }

  chunk(chunk: ChatCompletionChunk, events: ResponseStreamEvent[]): void {
    if (chunk.usage) this.#usage = chunk.usage;
    const choice = chunk.choices.find((entry) => entry.index === 0) ?? chunk.choices[0];
    if (!choice) return;
    const delta = (choice.delta ?? {}) as { content?: unknown; refusal?: unknown; tool_calls?: ChunkToolCall[] };
    if (typeof delta.content === 'string' && delta.content !== '') {
      const message = this.#message(events);
      message.text += delta.content;
      this.#textDelta(events, message, delta.content);
    }
    if (typeof delta.refusal === 'string' && delta.refusal !== '') {
      const message = this.#message(events);
      message.refusal = (message.refusal ?? '') + delta.refusal;
    }
    if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls) this.#toolCallDelta(call, events);
    if (choice.finish_reason) this.#finishReason = choice.finish_reason;
  }

  /** The chat stream ended as it should: the open item closes and the terminal event carries the whole response. */
  finish(events: ResponseStreamEvent[]): ResponseObject {
    // A chat answer with nothing in it is still one (empty) message, as the JSON path answers.
    if (this.#output.length === 0 && !this.#open) this.#message(events);
    const incompleteReason = incompleteReasonOf(this.#finishReason);
    this.#close(events, incompleteReason ? 'incomplete' : 'completed');
    const response = responseObject(this.#frame, {
      status: incompleteReason ? 'incomplete' : 'completed',
      output: this.#output,
      usage: this.#usage ? responseUsageFromChat(this.#usage) : null,
      error: null,
      ...(incompleteReason ? { incompleteReason } : {}),
    });
    this.#end(events, incompleteReason ? 'response.incomplete' : 'response.completed', response);
    return response;
  }

  /** The chat stream broke after it started: what came so far, closed as incomplete, and `response.failed` with the code. */
  fail(code: string, message: string, events: ResponseStreamEvent[]): ResponseObject {
    this.#close(events, 'incomplete');
    const response = responseObject(this.#frame, {
      status: 'failed',
      output: this.#output,
      usage: this.#usage ? responseUsageFromChat(this.#usage) : null,
      error: { code, message },
    });
    this.#end(events, 'response.failed', response);
    return response;
  }

  #end(events: ResponseStreamEvent[], type: 'response.completed' | 'response.incomplete' | 'response.failed', response: ResponseObject): void {
    this.#final = response;
    this.#finalJson = JSON.stringify(response);
    this.#emitResponse(events, type, response, this.#finalJson);
  }

  /**
   * An event that carries the whole response (`response.created`, `.in_progress` and the terminal
   * one), with its JSON text written around the response's, serialised once: the largest events
   * of a stream, in the key order `JSON.stringify` gives the object.
   */
  #emitResponse(events: ResponseStreamEvent[], type: string, response: ResponseObject, json: string): void {
    const sequence = this.#sequence++;
    const event = { type, response, sequence_number: sequence } as unknown as ResponseStreamEvent;
    events.push(withWireJson(event, `{"type":"${type}","response":${json},"sequence_number":${sequence}}`));
  }

  #emit(events: ResponseStreamEvent[], event: Record<string, unknown> & { type: string }): void {
    (event as ResponseStreamEvent).sequence_number = this.#sequence++;
    events.push(event as ResponseStreamEvent);
  }

  /**
   * The event sent for nearly every chunk, with its JSON text written here: the ids and numbers
   * are svc's own and the text is escaped by JSON.stringify, so the SSE writer need not
   * serialise the object again (the chat route forwards an unchanged chunk's text the same way).
   */
  #textDelta(events: ResponseStreamEvent[], message: OpenMessage, text: string): void {
    const sequence = this.#sequence++;
    const event = {
      type: 'response.output_text.delta',
      sequence_number: sequence,
      item_id: message.id,
      output_index: message.outputIndex,
      content_index: 0,
      delta: text,
      logprobs: [],
    };
    const json = `{"type":"response.output_text.delta","sequence_number":${sequence},"item_id":"${message.id}","output_index":${message.outputIndex},"content_index":0,"delta":${JSON.stringify(text)},"logprobs":[]}`;
    events.push(withWireJson(event, json));
  }

  /** The open message, opened (after closing a function call) when text starts. */
  #message(events: ResponseStreamEvent[]): OpenMessage {
    if (this.#open?.kind === 'message') return this.#open;
    this.#close(events, 'completed');
    const message: OpenMessage = { kind: 'message', id: newItemId('msg'), outputIndex: this.#output.length, text: '', refusal: undefined };
    this.#open = message;
    this.#emit(events, {
      type: 'response.output_item.added',
      output_index: message.outputIndex,
      item: { id: message.id, type: 'message', status: 'in_progress', role: 'assistant', content: [] },
    });
    this.#emit(events, {
      type: 'response.content_part.added',
      item_id: message.id,
      output_index: message.outputIndex,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
    });
    return message;
  }

  #toolCallDelta(delta: ChunkToolCall, events: ResponseStreamEvent[]): void {
    const index = delta.index ?? 0;
    let call = this.#calls.get(index);
    if (!call) {
      this.#close(events, 'completed');
      call = {
        kind: 'call',
        id: newItemId('fc'),
        outputIndex: this.#output.length,
        callId: delta.id ?? newItemId('fc'),
        name: delta.function?.name ?? '',
        arguments: '',
      };
      this.#calls.set(index, call);
      this.#open = call;
      this.#emit(events, {
        type: 'response.output_item.added',
        output_index: call.outputIndex,
        item: functionCallItem(call.id, call.callId, call.name, '', 'in_progress'),
      });
    } else if (this.#open !== call) {
      // OpenAI-compatible servers send one tool call after another; a delta to one already closed cannot be placed in order.
      throw new ServiceError('upstream_error', 'The model sent tool call arguments out of order (a call resumed after the next began).');
    } else if (delta.function?.name) call.name += delta.function.name;
    const piece = delta.function?.arguments;
    if (typeof piece === 'string' && piece !== '') {
      call.arguments += piece;
      this.#emit(events, { type: 'response.function_call_arguments.delta', item_id: call.id, output_index: call.outputIndex, delta: piece });
    }
  }

  #close(events: ResponseStreamEvent[], status: 'completed' | 'incomplete'): void {
    const open = this.#open;
    if (!open) return;
    this.#open = undefined;
    let item: ResponseOutputItem;
    if (open.kind === 'message') {
      const part = { type: 'output_text', text: open.text, annotations: [], logprobs: [] };
      this.#emit(events, {
        type: 'response.output_text.done',
        item_id: open.id,
        output_index: open.outputIndex,
        content_index: 0,
        text: open.text,
        logprobs: [],
      });
      this.#emit(events, { type: 'response.content_part.done', item_id: open.id, output_index: open.outputIndex, content_index: 0, part });
      item = messageItem(open.id, open.text, open.refusal, status);
    } else {
      this.#emit(events, {
        type: 'response.function_call_arguments.done',
        item_id: open.id,
        output_index: open.outputIndex,
        name: open.name,
        arguments: open.arguments,
      });
      item = functionCallItem(open.id, open.callId, open.name, open.arguments, status);
    }
    this.#output.push(item);
    this.#emit(events, { type: 'response.output_item.done', output_index: open.outputIndex, item });
  }
}
