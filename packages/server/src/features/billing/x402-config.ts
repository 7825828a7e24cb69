import { findDefaultAsset, getDefaultAsset } from '@x402/evm';
import { EVM_NETWORK_CHAIN_ID_MAP } from '@x402/evm/v1';
import { z } from 'zod';

/** The public facilitator the x402 packages default to (testnets; no key needed). */
const DEFAULT_FACILITATOR_URL = 'https://x402.org/facilitator';

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'expected an EVM address: 0x and 40 hex digits');

/** CAIP-2 ids of the EVM networks x402 v1 also names, so every challenge can be answered in both versions. */
const v1NameOf = new Map(Object.entries(EVM_NETWORK_CHAIN_ID_MAP).map(([name, chainId]) => [`eip155:${chainId}`, name]));

/**
 * x402 settings. Without `SVC_X402_PAY_TO` the pay-per-call route answers 503 and nothing else
 * changes. The asset defaults to the network's USDC; another token needs its EIP-712 domain name
 * and version (`SVC_X402_ASSET_NAME`, `SVC_X402_ASSET_VERSION`) because payers sign over them.
 */
export const x402EnvShape = {
  SVC_X402_PAY_TO: address.optional(),
  SVC_X402_NETWORK: z
    .string()
    .default('eip155:84532')
    .refine((network) => v1NameOf.has(network), `expected a CAIP-2 EVM network x402 knows, such as eip155:84532 (Base Sepolia) or eip155:8453 (Base)`),
  SVC_X402_ASSET: address.optional(),
  SVC_X402_ASSET_NAME: z.string().min(1).optional(),
  SVC_X402_ASSET_VERSION: z.string().min(1).optional(),
  SVC_X402_FACILITATOR_URL: z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' }).optional(),
  SVC_X402_FACILITATOR_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(15_000),
};

export interface X402Config {
  /** The address paid; undefined means pay-per-call is off. */
  payTo: string | undefined;
  /** CAIP-2 (`eip155:84532`) and the v1 name of the same network (`base-sepolia`). */
  network: string;
  networkV1: string;
  chainId: number;
  asset: string;
  /** The token's EIP-712 domain, which the payer's signature covers. */
  assetName: string;
  assetVersion: string;
  facilitatorUrl: string;
  facilitatorTimeoutMs: number;
}

function defaultAssetOf(network: string) {
  try {
    return getDefaultAsset(network as `${string}:${string}`);
  } catch {
    return undefined;
  }
}

export function toX402Config(env: z.output<z.ZodObject<typeof x402EnvShape>>): X402Config | { error: string } {
  const network = env.SVC_X402_NETWORK;
  const known = env.SVC_X402_ASSET ? findDefaultAsset(env.SVC_X402_ASSET, network as `${string}:${string}`) : defaultAssetOf(network);
  const asset = env.SVC_X402_ASSET ?? known?.asset;
  if (!asset) return { error: `SVC_X402_ASSET: ${network} has no default stablecoin in x402; set the token contract address` };
  const assetName = env.SVC_X402_ASSET_NAME ?? known?.name;
  const assetVersion = env.SVC_X402_ASSET_VERSION ?? known?.version;
  if (!assetName || !assetVersion) return { error: `SVC_X402_ASSET_NAME and SVC_X402_ASSET_VERSION: ${asset} is not a token x402 knows on ${network}; give its EIP-712 domain name and version` };
  return {
    payTo: env.SVC_X402_PAY_TO,
    network,
    networkV1: v1NameOf.get(network)!,
    chainId: Number(network.split(':')[1]),
    asset,
    assetName,
    assetVersion,
    facilitatorUrl: (env.SVC_X402_FACILITATOR_URL ?? DEFAULT_FACILITATOR_URL).replace(/\/+$/, ''),
    facilitatorTimeoutMs: env.SVC_X402_FACILITATOR_TIMEOUT_MS,
  };
}
