import type { ChatCompletionsBody, ResponseObject, ResponsesCreateBody, ResponseStreamEvent, SseMessage } from '@svc/schemas';
import type { Transaction } from 'sequelize';
import type { ServerDeps } from '../../deps.ts';
import type { RequestContext } from '../../http/request-context.ts';
import { outliveRequest } from '../../http/mount-contract.ts';
import { ServiceError } from '../../service-error.ts';
import type { ChatChunkStream, InferenceProvider, ResponsesUpstreamEvent } from '../../inference/provider.ts';
import {
  ChatStreamTranslator,
  chatRequestFromResponses,
  chatUsageFromResponse,
  newResponseId,
  outcomeFromChatCompletion,
  refuse,
  responseObject,
  type ResponseFrame,
} from './translation/index.ts';
import { principalKey } from '../identity/index.ts';
import { callWithFallbacks, chatStreamEvents, invokeModel, reportUsage, servedBy } from '../inference/index.ts';
import type { ResolvedModel } from '../models/index.ts';
import type { Tasks } from '../tasks/index.ts';
import type { WebhookDeliveries } from './webhooks/webhook-deliveries.ts';
import { followBackground, responseOfTask, startBackground } from './background.ts';
import { holdToChatLimits } from './chat-limits.ts';
import { gatherConversation, itemsForUpstream, type Conversation } from './conversation.ts';
import { passedThroughEvents, translatedEvents, type Persist } from './response-events.ts';
import type { ResponseStore } from './response-store.ts';
import type { ResponsesConfig } from './responses-config.ts';

export interface ResponsesDeps extends Pick<ServerDeps, 'models' | 'usage'> {
  store: ResponseStore;
  tasks: Tasks;
  webhooks: WebhookDeliveries;
  config: ResponsesConfig;
}

type Answer = ResponseObject | AsyncIterable<SseMessage<ResponseStreamEvent>>;

const OPERATION = 'responses';
const noUsage = () => ({ prompt_tokens: 0, total_tokens: 0 });
const unsupported = (provider: InferenceProvider, what: string) =>
  new ServiceError('model_operation_unsupported', `Engine ${provider.id} cannot serve ${what}.`);
/** The built-in engine reads text; an upstream chat model may take images (it refuses them itself if not). */
const abilitiesOf = (provider: InferenceProvider) => ({ images: provider.kind !== 'builtin' });

/** One request's fixed facts, for every form of its answer. */
interface Call {
  body: ResponsesCreateBody;
  request: RequestContext;
  owner: string;
  store: boolean;
  conversation: Conversation;
  id: string;
  createdAt: number;
}

/**
 * `POST /v1/responses`. A model declared with the capability `responses` gets the request passed
 * through to its upstream; every other chat model answers through the translation to Chat
 * Completions. Either way svc keeps the conversation: `previous_response_id` is read from svc's
 * store and sent as input, and with `store` the answer is kept before the caller gets it.
 */
export async function createResponse(deps: ResponsesDeps, body: ResponsesCreateBody, request: RequestContext): Promise<Answer> {
  if (body.background === true && body.store === false)
    throw refuse(
      'responses_parameter_unsupported',
      ['store'],
      'a background response is always stored, so that it can be polled: leave store out or set it true.',
    );
  const passThrough = deps.models.responsesCapability(body.model) === 'responses';
  if (passThrough) refuseUpstreamObjects(body);
  const owner = principalKey(request.principal);
  const call: Call = {
    body,
    request,
    owner,
    store: body.background === true || (body.store ?? deps.config.storeByDefault),
    conversation: await gatherConversation(deps.store, owner, body),
    id: newResponseId(),
    createdAt: Math.floor(Date.now() / 1000),
  };
  // Answered through chat, so held to chat's input limits before any engine runs (the images check waits for the engine chosen).
  if (!passThrough) holdToChatLimits(chatRequestFromResponses(body, call.conversation.items, { images: true }, false));
  if (body.background === true) return inBackground(deps, call, passThrough);
  if (passThrough) return body.stream ? passThroughStream(deps, call) : passThroughJson(deps, call);
  return body.stream ? translatedStream(deps, call) : translatedJson(deps, call);
}

/**
 * `background: true`: the foreground's own stream, run as a task (background.ts) that outlives
 * this request, answered at once: the response `in_progress`, or with `stream: true` its events
 * as they are kept. The task's request context is this one's with the task's signal, so its usage
 * counts to the caller's key as in the foreground, and only a cancel (or the server stopping) ends it.
 */
async function inBackground(deps: ResponsesDeps, call: Call, passThrough: boolean): Promise<Answer> {
  const initial = responseObject(frameOf(call, deps.models.resolve(deps.models.responsesCapability(call.body.model), call.body.model)), {
    status: 'queued',
    output: [],
    usage: null,
    error: null,
  });
  const streamed = { ...call, body: { ...call.body, stream: true, background: null } };
  const credentialId = call.request.principal.developerKeyId;
  const ended = (status: 'completed' | 'failed' | 'cancelled' | 'incomplete', transaction?: Transaction) =>
    deps.webhooks.responseEnded(call.owner, call.id, status, credentialId, transaction);
  const task = await startBackground(deps.tasks, { id: call.id, owner: call.owner, credentialId, initial, ended }, (signal) => {
    const run = { ...streamed, request: { ...call.request, signal } };
    return passThrough ? passThroughStream(deps, run) : translatedStream(deps, run);
  });
  // The work is still this request's for the key's limits: its concurrency lease and token
  // reservation are held until the background run ends, not given back with the first answer.
  outliveRequest(call.request, task.ended);
  if (call.body.stream) return followBackground(deps.tasks, call.id, call.owner, undefined, call.request.signal);
  return responseOfTask(task.row);
}

/**
 * Fields that name objects stored at the upstream (a `conversation`, a `prompt` template by id, an
 * `item_reference` input item) are refused, not passed on: svc calls the upstream with the
 * operator's key, so they would reach the operator's stored objects, not the caller's. svc keeps
 * the caller's conversation itself (`previous_response_id`). Refused rather than stripped, so a
 * request is never answered as if it had asked something else.
 */
function refuseUpstreamObjects(body: ResponsesCreateBody): void {
  const named = body as { conversation?: unknown; prompt?: unknown };
  for (const field of ['conversation', 'prompt'] as const) {
    if (named[field] !== undefined && named[field] !== null)
      throw refuse(
        'responses_parameter_unsupported',
        [field],
        `names an object stored at the upstream, which svc calls with the operator's key; continue a conversation with previous_response_id instead.`,
      );
  }
  if (Array.isArray(body.input)) {
    const index = body.input.findIndex((item) => item.type === 'item_reference');
    if (index >= 0)
      throw refuse(
        'responses_input_unsupported',
        ['input', index, 'type'],
        "an item_reference names an item stored at the upstream, which svc calls with the operator's key; send the item itself.",
      );
  }
}

function frameOf(call: Call, served: ResolvedModel): ResponseFrame {
  return {
    id: call.id,
    createdAt: call.createdAt,
    model: served.model.id,
    body: call.body,
    previousResponseId: call.body.previous_response_id ?? null,
    store: call.store,
    servedBy: servedBy(served),
  };
}

/** Keeps the answer when the request asked for it (`store`); a response kept nothing otherwise. `json`: its text, when already written. */
function persister(deps: ResponsesDeps, call: Call): Persist {
  return async (response, json) => {
    if (call.store)
      await deps.store.save(
        call.owner,
        { response, inputItems: call.conversation.input, context: call.conversation.history },
        json,
        call.conversation.inputJson(),
      );
  };
}

async function translatedJson(deps: ResponsesDeps, call: Call): Promise<ResponseObject> {
  const { value: completion, served } = await invokeModel(deps, OPERATION, 'chat', call.body.model, call.request, async ({ model, provider }, options) => {
    if (!provider.chat) throw unsupported(provider, 'chat');
    const completion = await provider.chat(
      { model, body: chatRequestFromResponses(call.body, call.conversation.items, abilitiesOf(provider), false) },
      options,
    );
    return { value: completion, usage: completion.usage ?? noUsage() };
  });
  const response = responseObject(frameOf(call, served), outcomeFromChatCompletion(completion));
  await persister(deps, call)(response);
  return response;
}

async function translatedStream(deps: ResponsesDeps, call: Call): Promise<AsyncIterable<SseMessage<ResponseStreamEvent>>> {
  const started = performance.now();
  let chatBody: ChatCompletionsBody | undefined;
  const { value: chunks, served } = await callWithFallbacks<ChatChunkStream>(
    deps,
    OPERATION,
    'chat',
    call.body.model,
    call.request,
    async ({ model, provider }, options) => {
      if (!provider.chatStream) throw unsupported(provider, 'chat');
      chatBody = chatRequestFromResponses(call.body, call.conversation.items, abilitiesOf(provider), true);
      return { value: await provider.chatStream({ model, body: chatBody }, options), usage: noUsage() };
    },
    started,
  );
  // The chat route's own stream: usage counted (or reported by the engine), failures as a final error chunk, a client that leaves reported.
  const chatEvents = chatStreamEvents(chunks, chatBody!, served, call.request, (outcome) =>
    reportUsage(deps.usage, {
      operation: OPERATION,
      resolved: served,
      usage: outcome.usage,
      started,
      request: call.request,
      ok: outcome.ok,
      ...(outcome.errorCode !== undefined ? { errorCode: outcome.errorCode } : {}),
    }),
  );
  return translatedEvents(chatEvents, new ChatStreamTranslator(frameOf(call, served)), persister(deps, call));
}

/** The body an upstream that speaks Responses gets: the caller's, with the conversation as input and svc keeping it (`store: false` upstream). */
function upstreamBody(call: Call): Record<string, unknown> {
  const { previous_response_id: _previous, store: _store, stream: _stream, model: _model, background: _background, ...rest } = call.body;
  return { ...rest, input: itemsForUpstream(call.conversation), store: false };
}

/** An upstream's Response with svc's id, public model id, conversation link and store setting. */
function renamer(call: Call, served: ResolvedModel) {
  const frame = frameOf(call, served);
  return (response: Record<string, unknown>): ResponseObject => ({
    ...response,
    id: frame.id,
    object: 'response',
    created_at: typeof response.created_at === 'number' ? response.created_at : frame.createdAt,
    status: (response.status as ResponseObject['status']) ?? 'in_progress',
    model: frame.model,
    output: Array.isArray(response.output) ? (response.output as ResponseObject['output']) : [],
    error: (response.error as ResponseObject['error']) ?? null,
    incomplete_details: (response.incomplete_details as ResponseObject['incomplete_details']) ?? null,
    previous_response_id: frame.previousResponseId,
    store: frame.store,
    svc: frame.servedBy,
  });
}

async function passThroughJson(deps: ResponsesDeps, call: Call): Promise<ResponseObject> {
  const { value, served } = await invokeModel(deps, OPERATION, 'responses', call.body.model, call.request, async ({ model, provider }, options) => {
    if (!provider.responses) throw unsupported(provider, 'responses');
    const answer = await provider.responses({ model, body: upstreamBody(call) }, options);
    return { value: answer, usage: chatUsageFromResponse(answer.usage) ?? noUsage() };
  });
  const response = renamer(call, served)(value);
  await persister(deps, call)(response);
  return response;
}

async function passThroughStream(deps: ResponsesDeps, call: Call): Promise<AsyncIterable<SseMessage<ResponseStreamEvent>>> {
  const started = performance.now();
  const { value: events, served } = await callWithFallbacks<AsyncIterable<ResponsesUpstreamEvent>>(
    deps,
    OPERATION,
    'responses',
    call.body.model,
    call.request,
    async ({ model, provider }, options) => {
      if (!provider.responsesStream) throw unsupported(provider, 'responses');
      return { value: await provider.responsesStream({ model, body: upstreamBody(call) }, options), usage: noUsage() };
    },
    started,
  );
  return passedThroughEvents(
    events,
    renamer(call, served),
    persister(deps, call),
    (final, errorCode) => {
      const code = errorCode ?? (final ? undefined : 'client_disconnected');
      reportUsage(deps.usage, {
        operation: OPERATION,
        resolved: served,
        usage: chatUsageFromResponse(final?.usage) ?? noUsage(),
        started,
        request: call.request,
        ok: code === undefined,
        ...(code !== undefined ? { errorCode: code } : {}),
      });
    },
    call.request.signal,
  );
}
