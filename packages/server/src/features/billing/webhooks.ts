import { creditPacks, type PackCode } from '@svc/schemas';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type Stripe from 'stripe';
import type { Logger } from 'pino';
import { ServiceError } from '../../service-error.ts';
import { grantCredits, takeBackCredits } from './credit-ledger.ts';

/**
 * Verifies a Stripe webhook on its raw bytes and applies it once. The event id is recorded in
 * the same transaction as its effect, so a redelivered event changes nothing, and a grant is keyed
 * by its Checkout Session, so `completed` and `async_payment_succeeded` for one session grant once
 * in whatever order they come.
 */
export async function handleProcessorWebhook(
  deps: {
    sequelize: Sequelize;
    /** Loads the Stripe SDK, only once the secret is known to be set (see below). */
    webhooks: () => Promise<Stripe['webhooks']>;
    secret: string | undefined;
    log: Logger;
  },
  raw: Buffer,
  signature: string | undefined,
): Promise<{ duplicate: boolean }> {
  // Checked before the SDK loads: on a server without Stripe, an anonymous POST here would load it
  // (15 MiB resident, and tens of milliseconds of compiling on the event loop) only to answer 503.
  if (!deps.secret) throw new ServiceError('billing_not_configured', 'Webhooks are not configured on this server (STRIPE_WEBHOOK_SECRET).');
  const webhooks = await deps.webhooks();
  let event: Stripe.Event;
  try {
    event = webhooks.constructEvent(raw, signature ?? '', deps.secret);
  } catch (error) {
    // stripe-node says which check failed (no signature, wrong secret, timestamp outside the tolerance).
    throw new ServiceError('webhook_signature_invalid', `Webhook signature verification failed: ${(error as Error).message}`);
  }
  return deps.sequelize.transaction(async (transaction) => {
    const fresh = await deps.sequelize.query(
      'INSERT INTO billing_webhook_events (event_id, type) VALUES (:id, :type) ON CONFLICT (event_id) DO NOTHING RETURNING event_id',
      {
        replacements: { id: event.id, type: event.type },
        type: QueryTypes.SELECT,
        transaction,
      },
    );
    if (fresh.length === 0) return { duplicate: true };
    switch (event.type) {
      case 'checkout.session.completed':
        if (event.data.object.payment_status === 'paid') await grantSession(deps, transaction, event.data.object, event.id);
        break;
      case 'checkout.session.async_payment_succeeded':
        await grantSession(deps, transaction, event.data.object, event.id);
        break;
      case 'charge.refunded':
        await refundCharge(deps, transaction, event.data.object, event.id);
        break;
      default:
        break;
    }
    return { duplicate: false };
  });
}

async function grantSession(
  deps: { sequelize: Sequelize; log: Logger },
  transaction: Transaction,
  session: Stripe.Checkout.Session,
  eventId: string,
): Promise<void> {
  const [ours] = await deps.sequelize.query<{ principal_id: string; pack_code: PackCode; credits: number; amount: number }>(
    'SELECT principal_id, pack_code, credits, amount FROM billing_checkout_sessions WHERE session_id = :id',
    { replacements: { id: session.id }, type: QueryTypes.SELECT, transaction },
  );
  // Our own row is the truth; the metadata we set on the session is the fallback for a session made by another replica's lost write.
  const packCode = (ours?.pack_code ?? session.metadata?.svc_pack_code) as PackCode | undefined;
  const principalId = ours?.principal_id ?? session.metadata?.svc_principal_id;
  if (!packCode || !principalId || !(packCode in creditPacks)) {
    deps.log.warn({ session: session.id, event: eventId }, 'paid checkout session that svc did not create; no credits granted');
    return;
  }
  const credits = ours?.credits ?? creditPacks[packCode].credits;
  const amount = ours?.amount ?? creditPacks[packCode].amount;
  const paymentIntent = typeof session.payment_intent === 'string' ? session.payment_intent : (session.payment_intent?.id ?? null);
  const granted = await deps.sequelize.query(
    `INSERT INTO billing_grants (session_id, principal_id, pack_code, credits, amount, payment_intent, event_id) VALUES (:session, :principal, :pack, :credits, :amount, :intent, :event)
     ON CONFLICT (session_id) DO NOTHING RETURNING session_id`,
    {
      replacements: { session: session.id, principal: principalId, pack: packCode, credits, amount, intent: paymentIntent, event: eventId },
      type: QueryTypes.SELECT,
      transaction,
    },
  );
  if (granted.length > 0) await grantCredits(deps.sequelize, transaction, principalId, credits, session.id);
}

async function refundCharge(deps: { sequelize: Sequelize; log: Logger }, transaction: Transaction, charge: Stripe.Charge, eventId: string): Promise<void> {
  const intent = typeof charge.payment_intent === 'string' ? charge.payment_intent : charge.payment_intent?.id;
  if (!intent) return;
  const [grant] = await deps.sequelize.query<{ session_id: string; principal_id: string; credits: number; amount: number; refunded_credits: number }>(
    'SELECT session_id, principal_id, credits, amount, refunded_credits FROM billing_grants WHERE payment_intent = :intent FOR UPDATE',
    { replacements: { intent }, type: QueryTypes.SELECT, transaction },
  );
  if (!grant) {
    deps.log.warn({ intent, event: eventId }, 'refund of a payment that granted no credits');
    return;
  }
  // amount_refunded is cumulative over partial refunds: credits lose the same share, rounded down.
  const total = charge.amount > 0 ? charge.amount : grant.amount;
  const entitled = Math.min(grant.credits, Math.floor((grant.credits * charge.amount_refunded) / total));
  const delta = entitled - grant.refunded_credits;
  if (delta <= 0) return;
  await deps.sequelize.query('UPDATE billing_grants SET refunded_credits = :entitled WHERE session_id = :session', {
    replacements: { entitled, session: grant.session_id },
    transaction,
  });
  const taken = await takeBackCredits(deps.sequelize, transaction, grant.principal_id, delta, `refund:${eventId}`);
  if (taken < delta) deps.log.info({ principal: grant.principal_id, refunded: delta, taken }, 'refund took back only the unspent credits');
}
