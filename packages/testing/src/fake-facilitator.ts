import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { authorizationTypes } from '@x402/evm';
import { EVM_NETWORK_CHAIN_ID_MAP } from '@x402/evm/v1';
import { verifyTypedData, type Hex } from 'viem';

/**
 * A local stand-in for an x402 facilitator (none can be reached from here, nor a chain),
 * speaking the facilitator wire format the x402 packages use: `POST /verify` and `POST /settle`
 * with `{ x402Version, paymentPayload, paymentRequirements }`, answering `VerifyResponse`
 * (`isValid`, `invalidReason`, `payer`) and `SettleResponse` (`success`, `errorReason`,
 * `transaction`, `network`, `payer`); `GET /supported` lists the `exact` kinds. It checks the
 * `exact` EVM payment as the real one does (EIP-712 signature over the token's domain, payee,
 * amount, validity window), and keeps the chain's part in memory: balances and the
 * EIP-3009 nonces already used, so a settled authorization cannot settle twice.
 */
export interface FakeFacilitator {
  url: string;
  /** Every call as received: the path and the JSON body. */
  calls: Array<{ path: string; body: FacilitatorRequest }>;
  /** Transfers settled "on chain". */
  transfers: Array<{ from: string; to: string; value: bigint; nonce: string; transaction: string }>;
  /** Settling the authorization with this nonce fails, as a reverted transaction would. */
  failSettleOf(nonce: string): void;
  /** Stops answering (connections are refused): an unreachable facilitator. */
  close(): Promise<void>;
}

interface Authorization {
  from: Hex;
  to: Hex;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: Hex;
}
interface FacilitatorRequest {
  x402Version: number;
  paymentPayload: {
    x402Version: number;
    scheme?: string;
    network?: string;
    accepted?: { scheme: string; network: string };
    payload: { signature: Hex; authorization: Authorization };
  };
  paymentRequirements: {
    scheme: string;
    network: string;
    amount?: string;
    maxAmountRequired?: string;
    asset: Hex;
    payTo: string;
    extra?: { name?: string; version?: string };
  };
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

const chainIdOf = (network: string): number | undefined =>
  network.startsWith('eip155:') ? Number(network.slice(7)) : (EVM_NETWORK_CHAIN_ID_MAP as Record<string, number>)[network];

/** Every payer starts with this many base units (10 USDC), as a funded test wallet would. */
const STARTING_BALANCE = 10_000_000n;

export async function startFakeFacilitator(): Promise<FakeFacilitator> {
  const calls: FakeFacilitator['calls'] = [];
  const transfers: FakeFacilitator['transfers'] = [];
  const usedNonces = new Set<string>();
  const spent = new Map<string, bigint>();
  const failingNonces = new Set<string>();

  async function verify(request: FacilitatorRequest): Promise<{ isValid: boolean; invalidReason?: string; payer?: string }> {
    const { paymentPayload, paymentRequirements } = request;
    const authorization = paymentPayload.payload?.authorization;
    const payer = authorization?.from;
    if (!authorization || !paymentPayload.payload.signature) return { isValid: false, invalidReason: 'invalid_payload', payer };
    const scheme = paymentPayload.x402Version === 2 ? paymentPayload.accepted?.scheme : paymentPayload.scheme;
    const network = paymentPayload.x402Version === 2 ? paymentPayload.accepted?.network : paymentPayload.network;
    if (scheme !== 'exact' || paymentRequirements.scheme !== 'exact') return { isValid: false, invalidReason: 'unsupported_scheme', payer };
    if (network !== paymentRequirements.network) return { isValid: false, invalidReason: 'invalid_network', payer };
    const chainId = chainIdOf(paymentRequirements.network);
    if (!chainId) return { isValid: false, invalidReason: 'invalid_network', payer };
    const { name, version } = paymentRequirements.extra ?? {};
    if (!name || !version) return { isValid: false, invalidReason: 'invalid_exact_evm_missing_eip712_domain', payer };
    const signed = await verifyTypedData({
      address: authorization.from,
      domain: { name, version, chainId, verifyingContract: paymentRequirements.asset },
      types: authorizationTypes,
      primaryType: 'TransferWithAuthorization',
      message: {
        ...authorization,
        value: BigInt(authorization.value),
        validAfter: BigInt(authorization.validAfter),
        validBefore: BigInt(authorization.validBefore),
      },
      signature: paymentPayload.payload.signature,
    }).catch(() => false);
    if (!signed) return { isValid: false, invalidReason: 'invalid_exact_evm_payload_signature', payer };
    if (authorization.to.toLowerCase() !== paymentRequirements.payTo.toLowerCase())
      return { isValid: false, invalidReason: 'invalid_exact_evm_payload_recipient_mismatch', payer };
    const now = Math.floor(Date.now() / 1000);
    if (BigInt(authorization.validBefore) < BigInt(now + 6))
      return { isValid: false, invalidReason: 'invalid_exact_evm_payload_authorization_valid_before', payer };
    if (BigInt(authorization.validAfter) > BigInt(now)) return { isValid: false, invalidReason: 'invalid_exact_evm_payload_authorization_valid_after', payer };
    const required = paymentRequirements.amount ?? paymentRequirements.maxAmountRequired ?? '';
    if (BigInt(authorization.value) !== BigInt(required)) return { isValid: false, invalidReason: 'invalid_exact_evm_payload_authorization_value', payer };
    if (usedNonces.has(`${authorization.from.toLowerCase()}:${authorization.nonce.toLowerCase()}`))
      return { isValid: false, invalidReason: 'invalid_exact_evm_nonce_already_used', payer };
    const balance = STARTING_BALANCE - (spent.get(authorization.from.toLowerCase()) ?? 0n);
    if (balance < BigInt(authorization.value)) return { isValid: false, invalidReason: 'insufficient_funds', payer };
    return { isValid: true, payer };
  }

  async function settle(request: FacilitatorRequest) {
    const network = request.paymentRequirements.network;
    const verdict = await verify(request);
    const payer = verdict.payer ?? '';
    if (!verdict.isValid) return { success: false, errorReason: verdict.invalidReason, transaction: '', network, payer };
    if (failingNonces.has(request.paymentPayload.payload.authorization.nonce.toLowerCase())) {
      return { success: false, errorReason: 'transaction_failed', transaction: '', network, payer };
    }
    const authorization = request.paymentPayload.payload.authorization;
    usedNonces.add(`${authorization.from.toLowerCase()}:${authorization.nonce.toLowerCase()}`);
    spent.set(authorization.from.toLowerCase(), (spent.get(authorization.from.toLowerCase()) ?? 0n) + BigInt(authorization.value));
    const transaction = `0x${createHash('sha256').update(`${authorization.from}:${authorization.nonce}`).digest('hex')}`;
    transfers.push({ from: authorization.from, to: authorization.to, value: BigInt(authorization.value), nonce: authorization.nonce, transaction });
    return { success: true, transaction, network, payer };
  }

  const server: Server = createServer(async (request, response) => {
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    if (request.method === 'GET' && request.url === '/supported') {
      return send(200, {
        kinds: [
          { x402Version: 2, scheme: 'exact', network: 'eip155:84532' },
          { x402Version: 1, scheme: 'exact', network: 'base-sepolia' },
        ],
        extensions: [],
        signers: {},
      });
    }
    if (request.method !== 'POST' || (request.url !== '/verify' && request.url !== '/settle')) return send(404, { error: 'not found' });
    let body: FacilitatorRequest;
    try {
      body = (await readJson(request)) as FacilitatorRequest;
    } catch {
      return send(400, { error: 'invalid JSON' });
    }
    calls.push({ path: request.url, body });
    send(200, request.url === '/verify' ? await verify(body) : await settle(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    transfers,
    failSettleOf(nonce) {
      failingNonces.add(nonce.toLowerCase());
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
