import { z } from 'zod';
import { ChatCompletion, ChatCompletionsRequest, ChatStreamEvent } from '../inference/chat.ts';
import { inferenceLimits } from '../inference/limits.ts';
import { CACHE_STATUS_HEADER, CacheOptInHeaders } from '../inference/response-cache.ts';
import { cursorPaging } from '../cursor-paging.ts';
import { defineContract, defineRoute, jsonOrBytes, jsonOrSse } from '../route.ts';
import { billingLimits } from './packs.ts';
import {
  CheckoutSessionRequest,
  CheckoutSessionResponse,
  CreditBalance,
  CreditPaymentRequired,
  IdempotencyKeyHeader,
  StripeCreditUsagePage,
  UsageExportQuery,
  WebhookAck,
} from './records.ts';

const billing = { surface: 'base', tags: ['billing'] } as const;

export const billingContract = defineContract({
  checkout: defineRoute({
    ...billing,
    method: 'POST',
    path: '/v1/billing/processor/checkout-session',
    auth: { kind: 'scoped', scopes: ['billing:write'], principals: ['agent', 'operator'] },
    summary: 'Start buying a credit pack: a one-time Stripe Checkout Session',
    description:
      'Body `{ pack_code, return_to? }`: `starter_1000` (1000 credit-funded chat calls for 500 USD cents) or `builder_5000` (5000 for 2000). ' +
      'Answers the session id and the URL where the buyer pays; credits are granted when Stripe reports the payment (webhook). ' +
      'With an `Idempotency-Key`, a retry answers the same session (200, `replayed: true`) and the same key with another pack is a 409 `idempotency_conflict`. ' +
      'Without Stripe configured the route answers 503 `billing_not_configured`. The shared demo and open-access principals cannot buy credits (403).',
    headers: z.looseObject({ 'idempotency-key': IdempotencyKeyHeader.optional() }),
    body: CheckoutSessionRequest,
    bodyLimitBytes: 4096,
    errors: [409, 502, 503],
    responses: { 201: CheckoutSessionResponse, 200: CheckoutSessionResponse },
  }),
  balance: defineRoute({
    ...billing,
    method: 'GET',
    path: '/v1/billing/balance',
    auth: { kind: 'scoped', scopes: ['billing:read'] },
    summary: 'Spendable and reserved credits, and the packs on offer',
    responses: { 200: CreditBalance },
  }),
  usage: defineRoute({
    ...billing,
    method: 'GET',
    path: '/v1/billing/usage',
    auth: { kind: 'scoped', scopes: ['billing:read'] },
    summary: 'Credit usage receipts, newest first: a JSON page or CSV',
    description:
      `limit 1..${billingLimits.usagePageMax} (default ${billingLimits.usagePageDefault}); cursor at most ${billingLimits.usageCursorMaxChars} characters, the opaque \`next_cursor\` of the previous page (any other is 422 \`validation_failed\` on \`query.cursor\`, the spec's answer to every bad parameter); ` +
      "`format=csv` answers RFC 4180 CSV with a header row; a text cell starting with `=`, `+`, `-`, `@`, tab or CR (or their full-width forms) is written with a leading `'` and quoted, so a spreadsheet shows it instead of running it (OWASP CSV injection), and numbers stay unquoted numbers. Headers: `X-Svc-Remaining-Credits`, `X-Svc-Reserved-Credits`, `X-Svc-Has-More` (0/1), `X-Svc-Next-Cursor` (when more).",
    query: UsageExportQuery,
    paging: cursorPaging,
    responses: { 200: jsonOrBytes(StripeCreditUsagePage, 'text/csv; charset=utf-8') },
    // As a tool the page is JSON: the CSV form (and `all`, which only CSV streams) are REST's.
    agent: { omit: ['format', 'all'] },
  }),
  webhook: defineRoute({
    ...billing,
    method: 'POST',
    path: '/webhooks/processor',
    auth: { kind: 'public' },
    summary: 'Stripe webhooks: credits granted on paid checkouts, taken back on refunds',
    description:
      'Verified with the `Stripe-Signature` header over the raw body (400 `webhook_signature_invalid` on a bad or stale signature; nothing is recorded). ' +
      'Grants credits on `checkout.session.completed` with `payment_status: paid` and on `checkout.session.async_payment_succeeded`, at most once per session and once per event id, ' +
      'whatever the order or number of deliveries; `charge.refunded` takes back the unspent part of the refunded grant. Other event types answer 200 and change nothing.',
    body: z.any().describe('The raw event JSON as Stripe sent it.'),
    bodyEncoding: 'bytes',
    bodyMediaTypes: ['application/json'],
    bodyLimitBytes: 262_144,
    errors: [400, 503],
    responses: { 200: WebhookAck },
  }),
});

export const creditsContract = defineContract({
  chat: defineRoute({
    surface: 'base',
    tags: ['billing', 'inference'],
    method: 'POST',
    path: '/v1/credits/chat/completions',
    auth: { kind: 'scoped', scopes: ['billing:write', 'inference:invoke'], principals: ['agent', 'operator'] },
    summary: 'A chat completion paid with one prepaid credit (OpenAI wire format)',
    description:
      'The chat completion of POST /v1/chat/completions, funded by one credit per successful call. `Idempotency-Key` is required: a hold of one credit is taken before the engine runs, ' +
      'committed on success (an immutable usage receipt) or released on failure, disconnect or timeout. The same key answers the stored completion again and is never charged twice ' +
      '(a streamed call replays as its final completion in JSON); while the first call with the key is still running the key answers 409 `idempotency_in_progress`; ' +
      'the same key with another body is a 409 `idempotency_conflict`. No spendable credit: 402 `credits_exhausted` with a payment challenge and a `Link` header to the checkout route. ' +
      `The response cache applies as on POST /v1/chat/completions; an answer served from it (\`${CACHE_STATUS_HEADER}: hit\`) is a successful call and costs one credit like any other, ` +
      'since a credit buys a call, not tokens (and a free hit would make the cache a way to probe for free).',
    headers: CacheOptInHeaders.extend({ 'idempotency-key': IdempotencyKeyHeader }),
    body: ChatCompletionsRequest,
    bodyLimitBytes: inferenceLimits.chatBodyBytes,
    errors: [409, 413, 502, 504],
    responses: { 200: jsonOrSse(ChatCompletion, ChatStreamEvent), 402: CreditPaymentRequired },
  }),
});
