import { z } from 'zod';
import { inferenceLimits as limits } from './limits.ts';
import { InferenceUsage, optionalModel, ServedBy } from './usage.ts';

/** A content part: text is read by every engine; other part types pass through to an upstream as sent. */
const ContentPart = z.looseObject({ type: z.string().min(1).max(64), text: z.string().max(limits.chatMaxMessageChars).optional() });

export const ChatMessage = z
  .looseObject({
    role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
    content: z
      .union([
        z.string().max(limits.chatMaxMessageChars, `a message holds at most ${limits.chatMaxMessageChars} characters`),
        z.array(ContentPart).max(64),
        z.null(),
      ])
      .optional(),
    name: z.string().max(256).optional(),
  })
  .meta({ id: 'ChatMessage' });
export type ChatMessage = z.infer<typeof ChatMessage>;

/**
 * The OpenAI Chat Completions request. The fields below are read by svc; any other field an
 * OpenAI-compatible upstream understands (tools, response_format, seed, ...) is passed through
 * to it unchanged, and ignored by the built-in engine.
 */
export const ChatCompletionsRequest = z
  .looseObject({
    model: optionalModel,
    messages: z.array(ChatMessage).min(1, 'send at least one message').max(limits.chatMaxMessages, `at most ${limits.chatMaxMessages} messages`),
    temperature: z.number().min(0).max(2).nullable().optional(),
    top_p: z.number().min(0).max(1).nullable().optional(),
    max_tokens: z.number().int().min(1).max(limits.chatMaxTokens).nullable().optional(),
    max_completion_tokens: z.number().int().min(1).max(limits.chatMaxTokens).nullable().optional(),
    stop: z
      .union([
        z.string().min(1).max(256),
        z.array(z.string().min(1).max(256)).max(limits.chatMaxStopSequences, `at most ${limits.chatMaxStopSequences} stop sequences`),
      ])
      .nullable()
      .optional(),
    n: z
      .number()
      .int()
      .min(1)
      .max(limits.chatMaxChoices, `n is at most ${limits.chatMaxChoices}`)
      .nullable()
      .optional()
      .describe(
        'How many choices to generate, each with its `index` (in the answer and in every chunk of the stream). Passed to upstream models; the built-in engine answers one choice and refuses more with 400 `chat_choices_unsupported`.',
      ),
    stream: z.boolean().nullable().optional().describe('Answer a server-sent event stream of chat.completion.chunk objects ending with `data: [DONE]`.'),
    stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullable().optional(),
    user: z.string().max(256).optional(),
  })
  .meta({ id: 'ChatCompletionsRequest' });
export type ChatCompletionsRequest = z.input<typeof ChatCompletionsRequest>;
export type ChatCompletionsBody = z.output<typeof ChatCompletionsRequest>;

const FinishReason = z.enum(['stop', 'length', 'content_filter', 'tool_calls', 'function_call', 'error']);

export const ChatCompletion = z
  .looseObject({
    id: z.string(),
    object: z.literal('chat.completion'),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(
      z.looseObject({
        index: z.number().int().nonnegative(),
        message: z.looseObject({ role: z.literal('assistant'), content: z.string().nullable() }),
        finish_reason: FinishReason.nullable(),
        logprobs: z.null().optional(),
      }),
    ),
    usage: InferenceUsage.optional(),
    system_fingerprint: z.string().nullable().optional(),
    svc: ServedBy.extend({ note: z.string().optional() })
      .optional()
      .describe('Which engine served the answer; the built-in chat model says it is extractive here.'),
  })
  .meta({ id: 'ChatCompletion' });
export type ChatCompletion = z.infer<typeof ChatCompletion>;

/**
 * One event of the chat stream, in OpenAI's wire format: data-only SSE lines holding
 * chat.completion.chunk objects, then `data: [DONE]`. With `stream_options.include_usage`, the last
 * chunk before [DONE] has empty `choices` and the usage. A failure after the stream started ends it
 * with a chunk carrying a top-level `error { code, message }` and `finish_reason: "error"`
 * (OpenRouter's convention), never a silently truncated stream.
 */
export const ChatCompletionChunk = z
  .looseObject({
    id: z.string(),
    object: z.literal('chat.completion.chunk'),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(
      z.looseObject({
        index: z.number().int().nonnegative(),
        delta: z.looseObject({ role: z.literal('assistant').optional(), content: z.string().nullable().optional() }),
        finish_reason: FinishReason.nullable(),
        logprobs: z.null().optional(),
      }),
    ),
    usage: InferenceUsage.nullable().optional(),
    error: z.object({ code: z.string(), message: z.string() }).optional(),
  })
  .meta({ id: 'ChatCompletionChunk' });
export type ChatCompletionChunk = z.infer<typeof ChatCompletionChunk>;

/** The stream's events: chunks, and the literal end marker `[DONE]`. */
export const ChatStreamEvent = z.union([ChatCompletionChunk, z.literal('[DONE]')]).meta({ id: 'ChatStreamEvent' });
export type ChatStreamEvent = z.infer<typeof ChatStreamEvent>;
