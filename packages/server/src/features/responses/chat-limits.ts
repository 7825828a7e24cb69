import { ChatCompletionsRequest, inferenceLimits, type ChatCompletionsBody, type ValidationIssue } from '@svc/schemas';
import { parsePart, validationError } from '../../http/validate.ts';
import { ServiceError } from '../../service-error.ts';

/** The characters of a chat message that an engine reads: its text, its parts' text, its tool calls' arguments. */
function messageChars(message: Record<string, unknown>): number {
  let chars = 0;
  const { content, tool_calls: toolCalls } = message;
  if (typeof content === 'string') chars += content.length;
  else if (Array.isArray(content)) for (const part of content) if (typeof part?.text === 'string') chars += part.text.length;
  if (Array.isArray(toolCalls)) for (const call of toolCalls) chars += String(call?.function?.arguments ?? '').length;
  return chars;
}

/**
 * A Responses request answered through Chat Completions is a chat call, so it takes chat's input
 * limits, checked on the translated request before any engine runs: the messages (count, and
 * characters a message) by chat's own schema, 422 `validation_failed` as on
 * `/v1/chat/completions`; and their text in all at most chat's body cap, 413
 * `payload_too_large` as a chat body past it is. The Responses body may be four times chat's, and
 * `previous_response_id` adds the stored conversation: without this, one 4 MB input held the
 * built-in engine for half a second where chat's largest request takes 30-50 ms.
 */
export function holdToChatLimits(chat: ChatCompletionsBody): void {
  const issues: ValidationIssue[] = [];
  parsePart(ChatCompletionsRequest, chat, 'body', issues);
  if (issues.length > 0) {
    throw validationError(
      issues.map((issue) => ({
        ...issue,
        msg: `${issue.msg} (in the conversation as Chat Completions messages: instructions, then the stored conversation, then input)`,
      })),
    );
  }
  let chars = 0;
  for (const message of chat.messages as Array<Record<string, unknown>>) chars += messageChars(message);
  if (chars > inferenceLimits.chatBodyBytes) {
    throw new ServiceError(
      'payload_too_large',
      `The conversation as Chat Completions messages holds ${chars} characters of text; chat takes at most ${inferenceLimits.chatBodyBytes} (its body cap). Send less, or start a new conversation.`,
    );
  }
}
