import { sqlMigration } from './types.ts';

/**
 * x402 payments: one row per EIP-3009 authorization (token contract, payer and nonce, as the
 * token itself keys them), so an authorization is used for at most one answer across every
 * replica. `claimed` while its call runs, `settled` once the facilitator moved the money,
 * `released` when the call failed unpaid (the same authorization may then be sent again).
 */
export default sqlMigration(
  '20261122T1900-x402',
  [
    `CREATE TABLE IF NOT EXISTS x402_payments (
       id text PRIMARY KEY,
       network text NOT NULL,
       asset text NOT NULL,
       payer text NOT NULL,
       nonce text NOT NULL,
       x402_version smallint NOT NULL,
       amount text NOT NULL,
       pay_to text NOT NULL,
       state text NOT NULL CHECK (state IN ('claimed', 'settled', 'released')),
       request_id text NOT NULL,
       transaction_hash text,
       failure text,
       created_at timestamptz NOT NULL DEFAULT now(),
       updated_at timestamptz NOT NULL DEFAULT now(),
       UNIQUE (network, asset, payer, nonce)
     )`,
  ],
  ['DROP TABLE IF EXISTS x402_payments'],
);
