import { z } from 'zod';
import { responsesLimits as limits } from './limits.ts';

/**
 * One input item as the caller sends it. Kept loose on purpose: which kinds a model can take is
 * decided by the engine (translated to chat, or passed to an upstream that speaks Responses), and
 * a kind it cannot take is a 400 naming the item (`input[3].type`), not a schema failure.
 */
export const ResponseInputItem = z
  .looseObject({
    type: z.string().min(1).max(64).optional(),
    role: z.string().min(1).max(32).optional(),
    id: z.string().max(256).optional(),
  })
  .meta({ id: 'ResponseInputItem' });
export type ResponseInputItem = z.infer<typeof ResponseInputItem>;

/** A tool as the caller declares it; only `function` tools run through svc (others are refused by name). */
export const ResponseTool = z.looseObject({ type: z.string().min(1).max(64) }).meta({ id: 'ResponseTool' });
export type ResponseTool = z.infer<typeof ResponseTool>;

/**
 * `POST /v1/responses`, in OpenAI's field names. The fields below are read by svc; any other field
 * passes unchanged to an upstream that speaks the Responses API, and is refused by name (400) when
 * the request is translated to Chat Completions and chat cannot express it.
 */
export const ResponsesCreateRequest = z
  .looseObject({
    model: z.string().min(1).max(256).optional().describe('A model id from /v1/models; absent means the default chat model.'),
    input: z
      .union([z.string(), z.array(ResponseInputItem).max(limits.maxInputItems, `at most ${limits.maxInputItems} input items`)])
      .optional()
      .describe('A string (one user message) or input items: messages, function_call and function_call_output items.'),
    instructions: z
      .string()
      .max(limits.maxInstructionsChars)
      .nullable()
      .optional()
      .describe('A system message put first; not carried over by previous_response_id.'),
    tools: z.array(ResponseTool).max(limits.maxTools, `at most ${limits.maxTools} tools`).nullable().optional(),
    tool_choice: z
      .union([z.enum(['auto', 'none', 'required']), z.looseObject({ type: z.string().min(1).max(64) })])
      .nullable()
      .optional(),
    parallel_tool_calls: z.boolean().nullable().optional(),
    text: z
      .looseObject({
        format: z
          .looseObject({ type: z.string().min(1).max(64) })
          .nullable()
          .optional(),
      })
      .nullable()
      .optional(),
    temperature: z.number().min(0).max(2).nullable().optional(),
    top_p: z.number().min(0).max(1).nullable().optional(),
    max_output_tokens: z.number().int().min(1).max(limits.maxOutputTokens).nullable().optional(),
    metadata: z.record(z.string().max(64), z.string().max(512)).nullable().optional(),
    store: z
      .boolean()
      .nullable()
      .optional()
      .describe('Keep the response for retrieval and previous_response_id (default true unless the operator set SVC_RESPONSES_STORE_DEFAULT=false).'),
    previous_response_id: z.string().min(1).max(256).nullable().optional(),
    stream: z.boolean().nullable().optional().describe("Answer server-sent events in OpenAI's Responses order, each with its sequence_number."),
    background: z.boolean().nullable().optional(),
    user: z.string().max(256).optional(),
  })
  .meta({ id: 'ResponsesCreateRequest' });
export type ResponsesCreateRequest = z.input<typeof ResponsesCreateRequest>;
export type ResponsesCreateBody = z.output<typeof ResponsesCreateRequest>;
