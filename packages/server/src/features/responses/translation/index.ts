/**
 * The one translation between OpenAI's Responses API and Chat Completions: every chat model that
 * does not speak Responses itself (the built-in engine, most upstreams) answers through it. Request
 * in (`chatRequestFromResponses`), answer out (`outcomeFromChatCompletion`), stream out
 * (`ChatStreamTranslator`); what chat cannot express is refused by name (`refuse`).
 */
export { normaliseInput, placed, type ConversationItem, type PlacedItem } from './conversation-items.ts';
export { chatRequestFromResponses, refuseUntranslatable, type ChatEngineAbilities } from './request-to-chat.ts';
export { outcomeFromChatCompletion } from './chat-to-response.ts';
export { ChatStreamTranslator } from './chat-stream-to-events.ts';
export { responseObject, type ResponseFrame, type ResponseOutcome } from './response-frame.ts';
export { newResponseId, newItemId } from './response-ids.ts';
export { refuse } from './refusal.ts';
export { chatUsageFromResponse, responseUsageFromChat } from './usage.ts';
