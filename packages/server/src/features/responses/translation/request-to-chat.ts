import type { ChatCompletionsBody, ResponsesCreateBody } from '@svc/schemas';
import type { PlacedItem } from './conversation-items.ts';
import { refuse } from './refusal.ts';

/** What the engine that will answer can take, beyond text. */
export interface ChatEngineAbilities {
  /** Image parts (`input_image` as chat's `image_url`): an upstream may take them, the built-in engine cannot. */
  images: boolean;
}

/**
 * Fields of a Responses request that the translation reads or that mean nothing to the answer
 * (`store`, `metadata` and `previous_response_id` are svc's own business). Any other field with a
 * value is refused by name: chat cannot express it, and dropping it silently would answer a
 * different question than the one asked.
 */
const TRANSLATED = new Set([
  'model',
  'input',
  'instructions',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'text',
  'temperature',
  'top_p',
  'max_output_tokens',
  'metadata',
  'store',
  'previous_response_id',
  'stream',
  'stream_options',
  'background',
  'user',
  'include',
  'truncation',
  'reasoning',
  'service_tier',
  'safety_identifier',
  'prompt_cache_key',
]);

const isEmpty = (value: unknown) => value === undefined || value === null || (Array.isArray(value) && value.length === 0);

/** Refuses what chat cannot express, field by field, before any engine is called. */
export function refuseUntranslatable(body: ResponsesCreateBody): void {
  for (const [key, value] of Object.entries(body)) {
    if (!TRANSLATED.has(key) && !isEmpty(value))
      throw refuse('responses_parameter_unsupported', [key], 'not served for this model: it is answered through Chat Completions, which has no such field.');
  }
  if (!isEmpty(body.include))
    throw refuse(
      'responses_parameter_unsupported',
      ['include'],
      'extra output data (reasoning, logprobs, sources) is not produced through Chat Completions; send an empty list.',
    );
  const truncation = (body as { truncation?: unknown }).truncation;
  if (truncation !== undefined && truncation !== null && truncation !== 'disabled')
    throw refuse('responses_parameter_unsupported', ['truncation'], 'only "disabled" is served: svc does not drop earlier items to fit the context.');
  const reasoning = (body as { reasoning?: { summary?: unknown; generate_summary?: unknown } | null }).reasoning;
  if (reasoning && (!isEmpty(reasoning.summary) || !isEmpty(reasoning.generate_summary)))
    throw refuse('responses_parameter_unsupported', ['reasoning', 'summary'], 'reasoning summaries are not produced through Chat Completions.');
}

type ChatPart = Record<string, unknown>;
type ChatMessage = Record<string, unknown> & { role: string };

/** A message item's content as chat content: a string when every part is text (what every chat server takes), parts otherwise. */
function chatContent(content: unknown, path: ReadonlyArray<string | number>, abilities: ChatEngineAbilities): string | ChatPart[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw refuse('responses_input_unsupported', [...path, 'content'], 'expected a string or a list of content parts.');
  const parts = content.map((part: Record<string, unknown>, index): ChatPart => {
    const where = [...path, 'content', index, 'type'];
    switch (part?.type) {
      case 'input_text':
      case 'output_text':
      case 'text':
        return { type: 'text', text: String(part.text ?? '') };
      case 'refusal':
        return { type: 'text', text: String(part.refusal ?? '') };
      case 'input_image':
        if (!abilities.images) throw refuse('responses_input_unsupported', where, 'this model takes text only.');
        if (typeof part.image_url !== 'string')
          throw refuse('responses_input_unsupported', [...path, 'content', index, 'image_url'], 'an image is served by URL or data URL; file ids are not.');
        return { type: 'image_url', image_url: { url: part.image_url, ...(typeof part.detail === 'string' ? { detail: part.detail } : {}) } };
      default:
        throw refuse(
          'responses_input_unsupported',
          where,
          `a "${String(part?.type)}" part cannot be passed through Chat Completions (text${abilities.images ? ' and images' : ''} only).`,
        );
    }
  });
  return parts.every((part) => part.type === 'text') ? parts.map((part) => part.text as string).join('') : parts;
}

/** Tool output as chat's tool message content: a string, or the text of its parts. */
function toolOutput(output: unknown, path: ReadonlyArray<string | number>): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output) && output.every((part: { type?: unknown }) => part?.type === 'input_text' || part?.type === 'output_text'))
    return output.map((part: { text?: unknown }) => String(part.text ?? '')).join('');
  throw refuse('responses_input_unsupported', [...path, 'output'], 'a tool output is served as text.');
}

/** The conversation as chat messages: an assistant message and the function calls after it become one message with `tool_calls`. */
export function chatMessages(instructions: string | null | undefined, items: readonly PlacedItem[], abilities: ChatEngineAbilities): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (instructions) messages.push({ role: 'system', content: instructions });
  /** The assistant message function calls join, until another kind of message comes. */
  let assistant: ChatMessage | undefined;
  for (const { item, path } of items) {
    switch (item.type) {
      case 'message': {
        const role = String(item.role);
        if (!['user', 'assistant', 'system', 'developer'].includes(role))
          throw refuse('responses_input_unsupported', [...path, 'role'], `unknown role "${role}".`);
        const message: ChatMessage = { role, content: chatContent(item.content, path, abilities) };
        messages.push(message);
        assistant = role === 'assistant' ? message : undefined;
        break;
      }
      case 'function_call': {
        const call = {
          id: String(item.call_id),
          type: 'function',
          function: { name: String(item.name), arguments: typeof item.arguments === 'string' ? item.arguments : JSON.stringify(item.arguments ?? {}) },
        };
        if (!assistant) {
          assistant = { role: 'assistant', content: null };
          messages.push(assistant);
        }
        assistant.tool_calls = [...((assistant.tool_calls as unknown[]) ?? []), call];
        break;
      }
      case 'function_call_output':
        messages.push({ role: 'tool', tool_call_id: String(item.call_id), content: toolOutput(item.output, path) });
        assistant = undefined;
        break;
      default:
        throw refuse(
          'responses_input_unsupported',
          [...path, 'type'],
          `a "${item.type}" item cannot be passed through Chat Completions (messages, function_call and function_call_output only).`,
        );
    }
  }
  return messages;
}

/** Function tools as chat tools; any other tool is one svc does not run. */
function chatTools(tools: ResponsesCreateBody['tools']): ChatPart[] | undefined {
  if (!tools || tools.length === 0) return undefined;
  return tools.map((tool, index) => {
    if (tool.type !== 'function')
      throw refuse('responses_tool_unsupported', ['tools', index, 'type'], `"${tool.type}" is a hosted tool svc does not run; only function tools are served.`);
    const { name, description, parameters, strict } = tool as { name?: unknown; description?: unknown; parameters?: unknown; strict?: unknown };
    if (typeof name !== 'string' || name === '') throw refuse('responses_tool_unsupported', ['tools', index, 'name'], 'a function tool needs a name.');
    return {
      type: 'function',
      function: {
        name,
        ...(typeof description === 'string' ? { description } : {}),
        ...(parameters ? { parameters } : {}),
        ...(typeof strict === 'boolean' ? { strict } : {}),
      },
    };
  });
}

function chatToolChoice(choice: ResponsesCreateBody['tool_choice']): unknown {
  if (choice === undefined || choice === null || typeof choice === 'string') return choice ?? undefined;
  const name = (choice as { name?: unknown }).name;
  if (choice.type === 'function' && typeof name === 'string') return { type: 'function', function: { name } };
  throw refuse(
    'responses_tool_unsupported',
    ['tool_choice', 'type'],
    `"${choice.type}" names a tool svc does not run; use auto, none, required or a function.`,
  );
}

/** `text.format` as chat's `response_format`. */
function chatResponseFormat(text: ResponsesCreateBody['text']): unknown {
  const format = text?.format as (Record<string, unknown> & { type: string }) | null | undefined;
  if (!format || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type === 'json_schema') {
    const { name, schema, strict, description } = format;
    return {
      type: 'json_schema',
      json_schema: { name, schema, ...(typeof strict === 'boolean' ? { strict } : {}), ...(typeof description === 'string' ? { description } : {}) },
    };
  }
  throw refuse('responses_parameter_unsupported', ['text', 'format', 'type'], `"${format.type}" is not served; use text, json_object or json_schema.`);
}

/**
 * The Chat Completions request that answers a Responses request: instructions first as the
 * system message, then the conversation (the stored one of `previous_response_id`, then `input`),
 * function tools, tool choice, structured output and the sampling fields, in chat's names. The
 * stream asks for the usage chunk, so the answer can carry the usage.
 */
export function chatRequestFromResponses(
  body: ResponsesCreateBody,
  items: readonly PlacedItem[],
  abilities: ChatEngineAbilities,
  stream: boolean,
): ChatCompletionsBody {
  refuseUntranslatable(body);
  const tools = chatTools(body.tools);
  const extra = body as {
    reasoning?: { effort?: unknown } | null;
    service_tier?: unknown;
    safety_identifier?: unknown;
    prompt_cache_key?: unknown;
    text?: { verbosity?: unknown } | null;
  };
  const request: Record<string, unknown> = {
    messages: chatMessages(body.instructions, items, abilities),
    ...(tools ? { tools } : {}),
    ...(tools && body.tool_choice != null ? { tool_choice: chatToolChoice(body.tool_choice) } : {}),
    ...(tools && typeof body.parallel_tool_calls === 'boolean' ? { parallel_tool_calls: body.parallel_tool_calls } : {}),
    ...(chatResponseFormat(body.text) !== undefined ? { response_format: chatResponseFormat(body.text) } : {}),
    ...(typeof extra.text?.verbosity === 'string' ? { verbosity: extra.text.verbosity } : {}),
    ...(typeof body.temperature === 'number' ? { temperature: body.temperature } : {}),
    ...(typeof body.top_p === 'number' ? { top_p: body.top_p } : {}),
    ...(typeof body.max_output_tokens === 'number' ? { max_tokens: body.max_output_tokens } : {}),
    ...(typeof extra.reasoning?.effort === 'string' ? { reasoning_effort: extra.reasoning.effort } : {}),
    ...(typeof body.user === 'string' ? { user: body.user } : {}),
    ...(typeof extra.service_tier === 'string' ? { service_tier: extra.service_tier } : {}),
    ...(typeof extra.safety_identifier === 'string' ? { safety_identifier: extra.safety_identifier } : {}),
    ...(typeof extra.prompt_cache_key === 'string' ? { prompt_cache_key: extra.prompt_cache_key } : {}),
    stream,
    ...(stream ? { stream_options: { include_usage: true } } : {}),
  };
  return request as ChatCompletionsBody;
}
