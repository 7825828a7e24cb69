import { creditPacks, type CheckoutSessionResponse, type PackCode } from '@svc/schemas';
import { QueryTypes, type Sequelize } from 'sequelize';
import type Stripe from 'stripe';
import { ServiceError } from '../../service-error.ts';

interface SessionRow {
  session_id: string;
  pack_code: PackCode;
  credits: number;
  amount: number;
  currency: string;
  url: string;
  created_at: Date;
}

const toResponse = (row: SessionRow, replayed: boolean): CheckoutSessionResponse => ({
  session_id: row.session_id,
  url: row.url,
  pack_code: row.pack_code,
  credits: row.credits,
  amount: row.amount,
  currency: row.currency,
  created_at: new Date(row.created_at).toISOString(),
  replayed,
});

/**
 * Creates a one-time Checkout Session for a pack, bound to the principal by metadata and by our
 * own row. With an Idempotency-Key the first session is answered again (stored here, and the key
 * is passed to Stripe too, scoped to the principal, so a retry that raced the first never makes two).
 */
export async function createCheckoutSession(
  deps: { sequelize: Sequelize; stripe: Stripe; successUrl: string; cancelUrl: string },
  call: { principalId: string; packCode: PackCode; idempotencyKey: string | undefined },
): Promise<CheckoutSessionResponse> {
  const { sequelize, stripe } = deps;
  if (call.idempotencyKey !== undefined) {
    const [existing] = await sequelize.query<SessionRow>('SELECT * FROM billing_checkout_sessions WHERE principal_id = :principal AND idempotency_key = :key', {
      replacements: { principal: call.principalId, key: call.idempotencyKey },
      type: QueryTypes.SELECT,
    });
    if (existing) {
      if (existing.pack_code !== call.packCode)
        throw new ServiceError(
          'idempotency_conflict',
          `This Idempotency-Key already started a checkout for ${existing.pack_code}; use a new key for ${call.packCode}.`,
        );
      return toResponse(existing, true);
    }
  }
  const pack = creditPacks[call.packCode];
  let session: Stripe.Checkout.Session;
  try {
    session = await stripe.checkout.sessions.create(
      {
        mode: 'payment',
        line_items: [{ quantity: 1, price_data: { currency: pack.currency, unit_amount: pack.amount, product_data: { name: pack.name } } }],
        success_url: deps.successUrl,
        cancel_url: deps.cancelUrl,
        client_reference_id: call.principalId,
        metadata: { svc_principal_id: call.principalId, svc_pack_code: call.packCode },
        payment_intent_data: { metadata: { svc_principal_id: call.principalId, svc_pack_code: call.packCode } },
      },
      call.idempotencyKey !== undefined ? { idempotencyKey: `svc-checkout:${call.principalId}:${call.idempotencyKey}` } : undefined,
    );
  } catch (error) {
    throw new ServiceError(
      'processor_error',
      `The payment processor refused to start a checkout: ${(error as { message?: string }).message ?? 'unknown error'}`,
      { cause: error, retryable: true },
    );
  }
  if (!session.url) throw new ServiceError('processor_error', 'The payment processor answered a session without a URL.');
  const [row] = await sequelize.query<SessionRow>(
    `INSERT INTO billing_checkout_sessions (session_id, principal_id, pack_code, credits, amount, currency, url, idempotency_key)
     VALUES (:id, :principal, :pack, :credits, :amount, :currency, :url, :key)
     ON CONFLICT (principal_id, idempotency_key) DO NOTHING RETURNING *`,
    {
      replacements: {
        id: session.id,
        principal: call.principalId,
        pack: call.packCode,
        credits: pack.credits,
        amount: pack.amount,
        currency: pack.currency,
        url: session.url,
        key: call.idempotencyKey ?? null,
      },
      type: QueryTypes.SELECT,
    },
  );
  if (row) return toResponse(row, false);
  // A concurrent request with the same key stored its session first; Stripe's own idempotency made it the same one.
  return createCheckoutSession(deps, call);
}
