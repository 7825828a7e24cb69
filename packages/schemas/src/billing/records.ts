import { z } from 'zod';
import { cursorList, cursorQuery } from '../cursor-list.ts';
import { queryBoolean } from '../query.ts';
import { InferenceUsage } from '../inference/usage.ts';
import { billingLimits, CreditPack, PackCode } from './packs.ts';

export const CheckoutSessionRequest = z
  .strictObject({
    pack_code: PackCode,
    return_to: z
      .enum(['service', 'console'])
      .optional()
      .describe(
        "Where Checkout sends the buyer back: `console`, the web console's credits page (`/ui/credits?checkout=success` or `=cancelled`), when the console is on; " +
          '`service` or absent, SVC_BILLING_SUCCESS_URL / SVC_BILLING_CANCEL_URL, by default the service root.',
      ),
  })
  .meta({ id: 'CheckoutSessionRequest' });
export type CheckoutSessionRequest = z.input<typeof CheckoutSessionRequest>;

export const CheckoutSessionResponse = z
  .object({
    session_id: z.string().describe("Stripe's Checkout Session id (`cs_...`)."),
    url: z.string().describe('Where the buyer pays.'),
    pack_code: PackCode,
    credits: z.number().int().positive(),
    amount: z.number().int().positive(),
    currency: z.string(),
    created_at: z.string(),
    replayed: z.boolean().describe('True when the Idempotency-Key was seen before: the first session is answered again.'),
  })
  .meta({ id: 'CheckoutSessionResponse' });
export type CheckoutSessionResponse = z.infer<typeof CheckoutSessionResponse>;

export const IdempotencyKeyHeader = z
  .string()
  .min(1)
  .max(billingLimits.idempotencyKeyMaxChars, `an Idempotency-Key holds at most ${billingLimits.idempotencyKeyMaxChars} characters`)
  .regex(/^[\x21-\x7e]+$/, 'an Idempotency-Key is printable ASCII without spaces');

export const CreditBalance = z
  .object({
    spendable: z.number().int().nonnegative().describe('Credits a new call can spend.'),
    reserved: z.number().int().nonnegative().describe('Credits held by calls in flight.'),
    packs: z.array(CreditPack).describe('What can be bought.'),
    can_buy: z
      .boolean()
      .describe(
        'Whether the packs can be bought on this server: false when the operator has not configured Stripe (STRIPE_SECRET_KEY), and then checkout answers 503 `billing_not_configured`.',
      ),
  })
  .meta({ id: 'CreditBalance' });
export type CreditBalance = z.infer<typeof CreditBalance>;

/** One committed credit-funded call: immutable, listed with a cursor, exportable as JSON or CSV. */
export const CreditUsageReceipt = z
  .object({
    receipt_id: z.string(),
    created_at: z.string(),
    credits: z.number().int().positive(),
    operation: z.string(),
    model: z.string(),
    request_id: z.string(),
    idempotency_key: z.string(),
    usage: InferenceUsage,
    credential_id: z.string().nullable().describe('The developer key that made the call; null for a bearer token'),
  })
  .meta({ id: 'CreditUsageReceipt' });
export type CreditUsageReceipt = z.infer<typeof CreditUsageReceipt>;

export const UsageExportQuery = cursorQuery({
  max: billingLimits.usagePageMax,
  default: billingLimits.usagePageDefault,
  cursorMaxChars: billingLimits.usageCursorMaxChars,
})
  .extend({
    format: z.enum(['json', 'csv']).default('json'),
    all: queryBoolean().default(false).describe('With format=csv: every receipt after the cursor, streamed in constant memory, instead of one page.'),
  })
  .meta({ id: 'UsageExportQuery' });

/** A page of receipts, newest first (Stripe's list shape: `data`, `has_more`). */
export const StripeCreditUsagePage = cursorList(CreditUsageReceipt, { object: true }).meta({ id: 'StripeCreditUsagePage' });
export type StripeCreditUsagePage = z.infer<typeof StripeCreditUsagePage>;

export const WebhookAck = z
  .object({ received: z.literal(true), duplicate: z.boolean().describe('True when this event id was processed before: nothing was done again.') })
  .meta({ id: 'WebhookAck' });

/** The 402 of the credit route: why, and where to buy credits. */
export const CreditPaymentRequired = z
  .object({
    error: z.string(),
    code: z.string(),
    request_id: z.string(),
    payment: z.object({
      scheme: z.literal('svc-credits'),
      credits_required: z.number().int().positive(),
      spendable: z.number().int().nonnegative(),
      checkout: z.string().describe('The checkout route that sells credits (POST with a pack_code).'),
      packs: z.array(CreditPack),
    }),
  })
  .meta({ id: 'CreditPaymentRequired' });
export type CreditPaymentRequired = z.infer<typeof CreditPaymentRequired>;
