import { z } from 'zod';
import { a2aLimits } from './a2a-skills.ts';

/** The fixed task every trial answers: nothing the caller sends is run or stored. */
export const A2A_TRIAL_TASK_ID = 'svc-public-trial-v1';

const JsonRpcId = z.union([z.string(), z.number()]);

/** The JSON-RPC 2.0 envelope `/a2a` accepts; the handler checks it so errors echo the request id. */
export const A2aJsonRpcEnvelope = z.looseObject({
  jsonrpc: z.literal('2.0'),
  id: JsonRpcId,
  method: z.string().min(1),
  params: z.record(z.string(), z.unknown()),
});

/** The envelope of a call with a credential: `agent/getAuthenticatedExtendedCard` (0.3) sends no params. */
export const A2aAuthenticatedEnvelope = A2aJsonRpcEnvelope.extend({ params: z.record(z.string(), z.unknown()).default({}) });

/** A 0.3 text part; the trial reads text only (spec 4.9: parts of kind `text`). */
const TextPartV03 = z.looseObject({ kind: z.literal('text'), text: z.string() });
export const A2aMessageSendParamsV03 = z.looseObject({
  message: z.looseObject({
    kind: z.literal('message').optional(),
    messageId: z.string().min(1),
    role: z.literal('user'),
    parts: z.array(TextPartV03).min(1),
  }),
});
/** A 1.0 text part: a `text` member, no `kind`. */
const TextPartV10 = z.looseObject({ text: z.string() });
export const A2aSendMessageParamsV10 = z.looseObject({
  message: z.looseObject({
    messageId: z.string().min(1),
    role: z.literal('ROLE_USER'),
    parts: z.array(TextPartV10).min(1),
  }),
});
const metadata = z.record(z.string(), z.unknown()).optional();
const httpsUri = z.url({ protocol: /^https$/, error: 'Only https URIs are fetched.' });
/** 0.3 parts a skill reads: text, data (a JSON object), and a file as base64 bytes or an https URI. */
const PartV03 = z.discriminatedUnion('kind', [
  z.looseObject({ kind: z.literal('text'), text: z.string(), metadata }),
  z.looseObject({ kind: z.literal('data'), data: z.record(z.string(), z.unknown()), metadata }),
  z.looseObject({
    kind: z.literal('file'),
    file: z.union([
      z.looseObject({ bytes: z.base64(), mimeType: z.string().max(256).optional(), name: z.string().max(1024).optional() }),
      z.looseObject({ uri: httpsUri, mimeType: z.string().max(256).optional(), name: z.string().max(1024).optional() }),
    ]),
    metadata,
  }),
]);
/** 1.0 parts: exactly one of `text`, `data`, `raw` (base64 bytes) or `url`, with `mediaType` and `filename`. */
const PartV10 = z.union([
  z.looseObject({ text: z.string(), metadata }),
  z.looseObject({ data: z.record(z.string(), z.unknown()), metadata }),
  z.looseObject({ raw: z.base64(), mediaType: z.string().max(256).optional(), filename: z.string().max(1024).optional(), metadata }),
  z.looseObject({ url: httpsUri, mediaType: z.string().max(256).optional(), filename: z.string().max(1024).optional(), metadata }),
]);
const parts = <P extends z.ZodType>(part: P) => z.array(part).min(1).max(a2aLimits.maxParts, `at most ${a2aLimits.maxParts} parts`);
const skillMessage = {
  messageId: z.string().min(1).max(256),
  contextId: z.string().max(256).optional(),
  taskId: z.string().max(256).optional(),
  metadata: metadata.describe('`skill` names the skill to run (see the agent card); a data part may name it instead.'),
};
/** A 0.3 `message/send` or `message/stream` from a caller with a credential: any part kind, a skill named. */
export const A2aSkillSendParamsV03 = z.looseObject({
  message: z.looseObject({ kind: z.literal('message').optional(), role: z.literal('user'), parts: parts(PartV03), ...skillMessage }),
  configuration: z
    .looseObject({
      blocking: z.boolean().optional().describe('false: answer the working task at once and run it in the background (`tasks/get` follows it).'),
      historyLength: z.number().int().nonnegative().optional(),
    })
    .optional(),
  metadata,
});
/** A 1.0 `SendMessage` or `SendStreamingMessage` from a caller with a credential. */
export const A2aSkillSendParamsV10 = z.looseObject({
  message: z.looseObject({ role: z.literal('ROLE_USER'), parts: parts(PartV10), ...skillMessage }),
  configuration: z
    .looseObject({
      returnImmediately: z.boolean().optional().describe('true: answer the working task at once and run it in the background (`GetTask` follows it).'),
      historyLength: z.number().int().nonnegative().optional(),
    })
    .optional(),
  metadata,
});
export type A2aSkillSendParamsV03 = z.output<typeof A2aSkillSendParamsV03>;
export type A2aSkillSendParamsV10 = z.output<typeof A2aSkillSendParamsV10>;
/** `tasks/cancel` (0.3) and `CancelTask` (1.0). */
export const A2aCancelTaskParams = z.looseObject({ id: z.string().min(1).max(256) });

/** `tasks/get` (0.3) and `GetTask` (1.0) take the same params. */
export const A2aGetTaskParams = z.looseObject({ id: z.string().min(1), historyLength: z.number().int().nonnegative().optional() });

/**
 * Any JSON-RPC request body. The route reads it as JSON and leaves the checking to the handler,
 * which answers JSON-RPC errors (with the request's id) rather than svc's error body.
 */
export const A2aJsonRpcRequest = z.unknown().meta({
  id: 'A2aJsonRpcRequest',
  description:
    'JSON-RPC 2.0: `{ jsonrpc: "2.0", id, method, params }`. Methods: `message/send` and `tasks/get` (A2A 0.3), `SendMessage` and `GetTask` (A2A 1.0, with the `A2A-Version: 1.0` header).',
});

export const A2aJsonRpcSuccess = z
  .object({ jsonrpc: z.literal('2.0'), id: JsonRpcId, result: z.record(z.string(), z.unknown()) })
  .meta({ id: 'A2aJsonRpcSuccess' });

/**
 * One event of `message/stream` (0.3) or `SendStreamingMessage` (1.0): a JSON-RPC response whose
 * result is the task, then status and artifact updates (0.3: `kind` `status-update` and
 * `artifact-update`; 1.0: `{ task }`, `{ statusUpdate }`, `{ artifactUpdate }`), the last with `final`.
 */
export const A2aStreamEvent = z.object({ jsonrpc: z.literal('2.0'), id: JsonRpcId, result: z.record(z.string(), z.unknown()) }).meta({ id: 'A2aStreamEvent' });
export type A2aJsonRpcSuccess = z.infer<typeof A2aJsonRpcSuccess>;
