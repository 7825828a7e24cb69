import { randomBytes } from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';

/** What identifies an authorization on chain: the token contract keys nonces per payer. */
export interface AuthorizationKey {
  network: string;
  asset: string;
  payer: string;
  nonce: string;
}

export interface PaymentClaim extends AuthorizationKey {
  x402Version: number;
  amount: string;
  payTo: string;
  requestId: string;
}

/**
 * A claim this old belongs to a server that died mid-call (no chat call runs this long): its
 * authorization may be claimed again. Had it been settled before the crash, the chain's nonce
 * makes the facilitator refuse it, so the payer is still charged at most once.
 */
export const STALE_CLAIM_SECONDS = 900;

/**
 * Claims an authorization for one call, atomically across replicas: a new nonce, one whose
 * earlier call was released unpaid, or one left claimed by a dead server is claimed; a nonce
 * claimed by a running call or already settled is not (a replay). Answers the claim id, or
 * undefined for a replay.
 */
export async function claimAuthorization(sequelize: Sequelize, claim: PaymentClaim): Promise<string | undefined> {
  const rows = await sequelize.query<{ id: string }>(
    `INSERT INTO x402_payments (id, network, asset, payer, nonce, x402_version, amount, pay_to, state, request_id)
     VALUES (:id, :network, :asset, :payer, :nonce, :version, :amount, :payTo, 'claimed', :requestId)
     ON CONFLICT (network, asset, payer, nonce) DO UPDATE
       SET state = 'claimed', id = EXCLUDED.id, x402_version = EXCLUDED.x402_version, request_id = EXCLUDED.request_id, failure = NULL, updated_at = now()
       WHERE x402_payments.state = 'released' OR (x402_payments.state = 'claimed' AND x402_payments.updated_at < now() - make_interval(secs => :staleSeconds))
     RETURNING id`,
    {
      replacements: {
        id: `xpay_${randomBytes(12).toString('base64url')}`,
        // Addresses and nonces are hex: one spelling, whatever case the payer used.
        network: claim.network,
        asset: claim.asset.toLowerCase(),
        payer: claim.payer.toLowerCase(),
        nonce: claim.nonce.toLowerCase(),
        version: claim.x402Version,
        amount: claim.amount,
        payTo: claim.payTo.toLowerCase(),
        requestId: claim.requestId,
        staleSeconds: STALE_CLAIM_SECONDS,
      },
      type: QueryTypes.SELECT,
    },
  );
  return rows[0]?.id;
}

/** The call failed or the payment was refused: nothing was charged, the authorization may come again. */
export async function releaseAuthorization(sequelize: Sequelize, claimId: string, failure: string): Promise<void> {
  await sequelize.query(`UPDATE x402_payments SET state = 'released', failure = :failure, updated_at = now() WHERE id = :id AND state = 'claimed'`, {
    replacements: { id: claimId, failure },
  });
}

/** The facilitator settled it: the authorization is spent for good. */
export async function markSettled(sequelize: Sequelize, claimId: string, transaction: string): Promise<void> {
  await sequelize.query(`UPDATE x402_payments SET state = 'settled', transaction_hash = :transaction, updated_at = now() WHERE id = :id`, {
    replacements: { id: claimId, transaction },
  });
}
