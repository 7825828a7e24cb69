/**
 * Pay-per-call with x402: no account and no token, a wallet pays for each call. It reads svc's
 * payment terms (`/.well-known/x402`, through the typed client, which never pays), then asks
 * one chat question through the official `@x402/fetch` client: the first request gets 402 with
 * the challenge, the client signs an EIP-3009 authorization for exactly the asked amount and
 * retries once; svc has the facilitator verify and settle it, and answers with the receipt in
 * the `PAYMENT-RESPONSE` header. The key stays in this process: svc never sees it.
 *
 * Run: `SVC_BASE_URL=http://127.0.0.1:8787 WALLET_KEY=0x... node src/main.ts "What is svc?"`.
 * Use a testnet wallet (the default network is Base Sepolia); every successful call spends.
 */
import { parseArgs } from 'node:util';
import { createClient } from '@svc/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { privateKeyToAccount } from 'viem/accounts';

const { positionals } = parseArgs({ allowPositionals: true });
const question = positionals[0] ?? 'How do I pay per call?';
const walletKey = process.env.WALLET_KEY;
if (!walletKey || !/^0x[0-9a-fA-F]{64}$/.test(walletKey)) {
  process.stderr.write('set WALLET_KEY to a 0x-prefixed 32-byte hex private key (a testnet wallet)\n');
  process.exit(2);
}
const svc = createClient(); // SVC_BASE_URL from the environment; no token is needed here.
const baseUrl = (process.env.SVC_BASE_URL ?? 'http://127.0.0.1:8787').replace(/\/$/, '');

// 1. The terms, before paying: what one call costs, in which token, on which network, to whom.
const terms = await svc.x402.discovery();
if (!terms.enabled) {
  process.stderr.write('this svc does not take x402 payments (its operator has not set SVC_X402_PAY_TO)\n');
  process.exit(1);
}
process.stdout.write(`terms: ${terms.amount} base units of ${terms.asset_name} on ${terms.network} to ${terms.pay_to}\n`);

// 2. One paid call: the wrapped fetch answers the 402 challenge by signing, then retries once.
const wallet = privateKeyToAccount(walletKey as `0x${string}`);
const payments = new x402Client();
registerExactEvmScheme(payments, { signer: wallet });
const paidFetch = wrapFetchWithPayment(fetch, payments);
const response = await paidFetch(`${baseUrl}/x402/chat/completions`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ model: 'svc-extractive-chat', messages: [{ role: 'user', content: question }] }),
});
if (!response.ok) {
  // A refusal names its reason (payment_replayed, insufficient_funds, ...) next to the code.
  const refusal = (await response.json().catch(() => ({}))) as { code?: string; reason?: string };
  process.stderr.write(`not paid: ${response.status} ${refusal.code ?? ''} ${refusal.reason ?? ''}\n`);
  process.exit(1);
}
const completion = (await response.json()) as { model: string; choices: Array<{ message: { content: string } }> };
process.stdout.write(`answer (${completion.model}): ${completion.choices[0]?.message.content.split('\n', 1)[0]}\n`);

// 3. The receipt: the settled transaction, on the network, from this wallet.
const receipt = decodePaymentResponseHeader(response.headers.get('payment-response') ?? '');
process.stdout.write(`paid: ${receipt.success ? 'settled' : 'not settled'} by ${receipt.payer} in ${receipt.transaction} on ${receipt.network}\n`);
