import { z } from 'zod';

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
export type A2aJsonRpcSuccess = z.infer<typeof A2aJsonRpcSuccess>;
