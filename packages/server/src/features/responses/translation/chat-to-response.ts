import type { ChatCompletion, ResponseOutputItem } from '@svc/schemas';
import { newItemId } from './response-ids.ts';
import type { ResponseOutcome } from './response-frame.ts';
import { responseUsageFromChat } from './usage.ts';

type ToolCall = { id?: unknown; function?: { name?: unknown; arguments?: unknown } };

/** A chat finish reason as the Responses API says it: `length` and `content_filter` leave the response incomplete. */
export function incompleteReasonOf(finishReason: string | null | undefined): string | undefined {
  if (finishReason === 'length') return 'max_output_tokens';
  if (finishReason === 'content_filter') return 'content_filter';
  return undefined;
}

/** An assistant message item: its text as one `output_text` part (and a refusal as a `refusal` part). */
export function messageItem(id: string, text: string, refusal: string | undefined, status: 'completed' | 'incomplete' | 'in_progress'): ResponseOutputItem {
  const content: Array<Record<string, unknown>> = [];
  if (text !== '' || refusal === undefined) content.push({ type: 'output_text', text, annotations: [], logprobs: [] });
  if (refusal !== undefined) content.push({ type: 'refusal', refusal });
  return { id, type: 'message', status, role: 'assistant', content };
}

export function functionCallItem(
  id: string,
  callId: string,
  name: string,
  args: string,
  status: 'completed' | 'incomplete' | 'in_progress',
): ResponseOutputItem {
  return { id, type: 'function_call', status, arguments: args, call_id: callId, name };
}

/**
 * A chat completion's first choice as the Responses API's outcome: the assistant's text as a
 * message item (when it said anything, or called nothing), each tool call as a function_call
 * item, the finish reason as the status, the usage in Responses names.
 */
export function outcomeFromChatCompletion(completion: ChatCompletion): ResponseOutcome {
  const choice = completion.choices[0];
  const message = (choice?.message ?? { content: null }) as { content?: unknown; refusal?: unknown; tool_calls?: ToolCall[] };
  const incompleteReason = incompleteReasonOf(choice?.finish_reason);
  const itemStatus = incompleteReason ? 'incomplete' : 'completed';
  const text = typeof message.content === 'string' ? message.content : '';
  const refusal = typeof message.refusal === 'string' ? message.refusal : undefined;
  const toolCalls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  const output: ResponseOutputItem[] = [];
  if (text !== '' || refusal !== undefined || toolCalls.length === 0) output.push(messageItem(newItemId('msg'), text, refusal, itemStatus));
  for (const call of toolCalls) {
    output.push(
      functionCallItem(
        newItemId('fc'),
        String(call.id ?? newItemId('fc')),
        String(call.function?.name ?? ''),
        typeof call.function?.arguments === 'string' ? call.function.arguments : '',
        itemStatus,
      ),
    );
  }
  return {
    status: incompleteReason ? 'incomplete' : 'completed',
    output,
    usage: completion.usage ? responseUsageFromChat(completion.usage) : null,
    error: null,
    ...(incompleteReason ? { incompleteReason } : {}),
  };
}
