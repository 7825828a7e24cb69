import { defineContract, defineRoute, jsonOrSse, paging } from '../route.ts';
import { CacheOptInHeaders, responseCacheNote } from '../inference/response-cache.ts';
import { responsesLimits as limits } from './limits.ts';
import { inferenceLimits } from '../inference/limits.ts';
import { ResponsesCreateRequest } from './request.ts';
import {
  ResponseDeleted,
  ResponseIdParams,
  ResponseInputItemList,
  ResponseInputItemsQuery,
  ResponseObject,
  ResponseRetrieveQuery,
  ResponseStreamEvent,
} from './response.ts';
import { webhookDeliveriesRoute } from './webhook-deliveries.ts';

const invoke = { auth: { kind: 'scoped', scopes: ['inference:invoke'] }, surface: 'base', tags: ['inference', 'responses'] } as const;
const ownership =
  'A stored response belongs to the principal that made it: another principal, an unknown id and one past its retention (SVC_RESPONSES_RETENTION_DAYS, default 30) all get 404 `response_not_found`.';

/** OpenAI's Responses API: served for every chat model, passed through to upstreams that speak it and translated to Chat Completions for the rest. */
export const responsesContract = defineContract({
  create: defineRoute({
    ...invoke,
    method: 'POST',
    path: '/v1/responses',
    summary: 'Create a model response in the OpenAI Responses wire format (JSON, or an SSE stream with `stream: true`)',
    description:
      "The OpenAI Responses API: the `openai` client's `responses.create`, the OpenAI Agents SDK and `@ai-sdk/openai` work unchanged with `baseURL` = `<base>/v1`. " +
      "An upstream model declared with the capability `responses` gets the request passed through (svc's model id mapped); every other chat model, built-in or upstream, " +
      'is served by translation to Chat Completions and back. What chat cannot express is a 400 naming the field: hosted tools (`responses_tool_unsupported`), ' +
      'fields it cannot express (`responses_parameter_unsupported`), input kinds the model cannot take (`responses_input_unsupported`). ' +
      'With `stream: true`: events `response.created`, `response.in_progress`, `response.output_item.added`, `response.content_part.added`, `response.output_text.delta`/`.done`, ' +
      '`response.function_call_arguments.delta`/`.done`, `response.content_part.done`, `response.output_item.done`, then `response.completed`, `response.incomplete` or ' +
      '`response.failed` (an upstream failure after the start, with its code), each with its `sequence_number`. `store` (default true) keeps the response for ' +
      '`GET /v1/responses/{id}` and `previous_response_id`, which continues a conversation on any replica; an unknown or foreign previous id is 404. ' +
      `Limits: body ${limits.bodyBytes} bytes (413), ${limits.maxInputItems} input items, ${limits.maxTools} tools, max_output_tokens 1..${limits.maxOutputTokens}, ${limits.maxConversationItems} items and ${limits.maxConversationBytes} bytes in a conversation (the stored conversation of \`previous_response_id\`, as stored, plus this input's JSON; past either, 400 \`responses_input_unsupported\`). ` +
      "Answered through Chat Completions, a request is a chat call and takes chat's input limits on the translated messages before any engine runs: " +
      `${inferenceLimits.chatMaxMessages} messages (\`instructions\` is one) and ${inferenceLimits.chatMaxMessageChars} characters a message (422 \`validation_failed\`), ${inferenceLimits.chatBodyBytes} characters of message text in all (413 \`payload_too_large\`). ` +
      "Passed through, `conversation`, `prompt` and `item_reference` items are refused (400), not stripped: they name objects stored at the upstream, which svc calls with the operator's key. " +
      '`background: true` answers at once with the response `in_progress` (or, with `stream: true`, its events as they come): the work runs as a task of the durable task store ' +
      '(docs/tasks.md), and the answer is polled with `GET /v1/responses/{id}` on any replica, its events streamed again with `?stream=true&starting_after=N`, ' +
      'and it is stopped with `POST /v1/responses/{id}/cancel`. A background response is always stored (`store: false` with `background: true` is 400), so a ' +
      'retry of the poll or the cancel is always safe. A cut client does not stop it; its usage is counted to the key as in the foreground. ' +
      `\`GET /v1/responses/{id}\` reads the stored answer alone. ${responseCacheNote} A hit answers the stored response again, its \`id\` included, and stores nothing new.`,
    headers: CacheOptInHeaders,
    body: ResponsesCreateRequest,
    bodyLimitBytes: limits.bodyBytes,
    errors: [400, 404, 413, 502, 504],
    responses: { 200: jsonOrSse(ResponseObject, ResponseStreamEvent) },
  }),
  retrieve: defineRoute({
    ...invoke,
    method: 'GET',
    path: '/v1/responses/:response_id',
    summary: 'A stored response, or a background response as it is now (JSON), or its events (SSE, `stream=true`)',
    description:
      `${ownership} A background response reads \`queued\` or \`in_progress\` until it ends (\`completed\`, \`failed\`, \`incomplete\` or \`cancelled\`), on any replica. ` +
      'With `stream=true` its events are streamed, from the first or after `starting_after`, each once and in `sequence_number` order, until the last; ' +
      'a stream cut anywhere resumes on any replica with the last `sequence_number` seen. A response made in the foreground has no events to stream: 404.',
    params: ResponseIdParams,
    query: ResponseRetrieveQuery,
    errors: [404],
    responses: { 200: jsonOrSse(ResponseObject, ResponseStreamEvent) },
  }),
  cancel: defineRoute({
    ...invoke,
    method: 'POST',
    path: '/v1/responses/:response_id/cancel',
    summary: 'Cancel a background response',
    description:
      `${ownership} Stops a background response running on any replica and answers it \`cancelled\`. A response that already ended is answered as it ended ` +
      '(a retried cancel is safe); a response made in the foreground is not a background one: 404.',
    params: ResponseIdParams,
    errors: [404],
    responses: { 200: ResponseObject },
  }),
  delete: defineRoute({
    ...invoke,
    method: 'DELETE',
    path: '/v1/responses/:response_id',
    summary: 'Delete a stored response (it can no longer be retrieved nor continued)',
    description: ownership,
    params: ResponseIdParams,
    errors: [404],
    responses: { 200: ResponseDeleted },
  }),
  inputItems: defineRoute({
    ...invoke,
    method: 'GET',
    path: '/v1/responses/:response_id/input_items',
    summary: "The input items of a stored response, by cursor (OpenAI's `after`/`last_id`)",
    description: `Items as svc stored them, each with an id; \`order\` desc (default) or asc; limit 1..${limits.inputItemsPageMax} (default ${limits.inputItemsPageDefault}). ${ownership}`,
    params: ResponseIdParams,
    query: ResponseInputItemsQuery,
    paging: paging({ items: 'data', cursor: 'last_id', hasMore: 'has_more', cursorIn: 'query', cursorParam: 'after' }),
    errors: [404],
    responses: { 200: ResponseInputItemList },
  }),
  webhookDeliveries: webhookDeliveriesRoute,
});
