import { z } from 'zod';

/**
 * The credit packs (inference-billing-api section 4.7): one credit pays one successful
 * credit-funded chat call. Amounts are in USD minor units (cents).
 */
export const creditPacks = {
  starter_1000: { credits: 1000, amount: 500, currency: 'usd', name: 'svc starter credits (1000 chat calls)' },
  builder_5000: { credits: 5000, amount: 2000, currency: 'usd', name: 'svc builder credits (5000 chat calls)' },
} as const;
export type PackCode = keyof typeof creditPacks;
export const PackCode = z.enum(Object.keys(creditPacks) as [PackCode, ...PackCode[]]).meta({ id: 'PackCode' });

export const CreditPack = z
  .object({ pack_code: PackCode, credits: z.number().int().positive(), amount: z.number().int().positive(), currency: z.string() })
  .meta({ id: 'CreditPack' });
export type CreditPack = z.infer<typeof CreditPack>;

export const offeredPacks = (): CreditPack[] =>
  Object.entries(creditPacks).map(([code, pack]) => ({ pack_code: code as PackCode, credits: pack.credits, amount: pack.amount, currency: pack.currency }));

/** Billing limits: page sizes (section 8) and how long a credit hold lives before housekeeping releases it. */
export const billingLimits = {
  usagePageDefault: 50,
  usagePageMax: 100,
  usageCursorMaxChars: 1024,
  creditsPerChatCall: 1,
  /** Credit chat calls without a fresh, distinct Idempotency-Key: the key's length bounds. */
  idempotencyKeyMaxChars: 255,
} as const;
