import { ChatCompletion, ChatCompletionsRequest, ChatStreamEvent } from '../inference/chat.ts';
import { inferenceLimits } from '../inference/limits.ts';
import { defineContract, defineRoute, jsonOrSse } from '../route.ts';
import { X402Discovery, X402PaymentRequired, x402Limits } from './x402.ts';

const x402 = { surface: 'base', auth: { kind: 'public' }, tags: ['billing', 'x402'] } as const;

const discoveryDescription =
  'Whether pay-per-call is enabled, and its exact payment contract: scheme, CAIP-2 network (and its v1 name), token contract and EIP-712 domain, amount per call in base units, ' +
  `pay-to address, facilitator and the resources it covers (${x402Limits.resources.map((resource) => `\`${resource}\``).join(', ')}). ` +
  'The runtime 402 challenge is authoritative. `/.well-known/x402` and `/.well-known/x402.json` answer the same body; HEAD answers the headers. ' +
  "When pay-per-call is not configured, the default network's token and names are read from x402's tables in a worker thread on the first read; if that fails, 503 `discovery_documents_unavailable` (retry).";

export const x402Contract = defineContract({
  chat: defineRoute({
    ...x402,
    tags: ['billing', 'x402', 'inference'],
    method: 'POST',
    path: '/x402/chat/completions',
    agent: { callable: false, reason: 'paid through the HTTP 402 payment headers, which a tool call cannot carry; inference_chat is the same operation' },
    summary: 'A chat completion paid per call with x402 (no account, no token)',
    description:
      'The chat completion of POST /v1/chat/completions, paid with an x402 `exact` payment of ' +
      `${x402Limits.amountPerCall} base units of the configured stablecoin (USDC: 0.005 USD). The body is validated first (422), so a bad request never asks for money. ` +
      'Unpaid: 402 with the v2 challenge base64-encoded in the `PAYMENT-REQUIRED` header, the v1 challenge as the body (`x402Version: 1`, `accepts[].maxAmountRequired`) and a `Link` header to `/.well-known/x402`. ' +
      'Paid: send `PAYMENT-SIGNATURE` (v2) or `X-PAYMENT` (v1). svc recovers the EIP-712 signer locally and checks payee, amount, validity window and that the authorization nonce was never used ' +
      '(nonces are kept in PostgreSQL, so replicas agree), then asks the facilitator to `/verify`. The chat runs, and only a complete answer is settled (`/settle`) before it is released: ' +
      'the 200 carries `PAYMENT-RESPONSE` (v2) or `X-PAYMENT-RESPONSE` (v1). If the chat fails after verification (an engine error, a timeout, the client leaving) the payment is not settled, ' +
      'the payer is not charged and the same authorization may be sent again. `stream: true` is served: the answer is computed whole, settled, and then streamed, so no stream starts unpaid and ' +
      'no failed stream is charged. A refused payment (bad signature, wrong payee, wrong amount, expired or not yet valid, replayed nonce, refused by the facilitator, or failing to settle) answers 402 ' +
      'with a fresh challenge, `code: x402_payment_refused` and the `reason`; nothing is charged. Without `SVC_X402_PAY_TO` the route answers 503 `x402_not_configured`; ' +
      'an unreachable facilitator answers 502 `x402_facilitator_error` (retry: the payment was not used).',
    body: ChatCompletionsRequest,
    bodyLimitBytes: inferenceLimits.chatBodyBytes,
    errors: [413, 502, 503, 504],
    responses: { 200: jsonOrSse(ChatCompletion, ChatStreamEvent), 402: X402PaymentRequired },
  }),
  discovery: defineRoute({
    ...x402,
    method: 'GET',
    path: '/.well-known/x402',
    summary: 'Pay-per-call status and payment contract',
    description: discoveryDescription,
    errors: [503],
    responses: { 200: X402Discovery },
  }),
  discoveryJson: defineRoute({
    ...x402,
    method: 'GET',
    path: '/.well-known/x402.json',
    summary: 'Pay-per-call status and payment contract (JSON alias)',
    description: discoveryDescription,
    errors: [503],
    responses: { 200: X402Discovery },
  }),
});
