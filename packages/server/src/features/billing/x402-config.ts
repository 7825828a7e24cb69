import { z } from 'zod';
import { httpUrl, integer, withoutTrailingSlash } from '../../env-values.ts';
import { workerModuleUrl } from '../../worker-modules.ts';
import { runWorkerOnce } from '../../worker-once.ts';
import { x402Evm, x402EvmV1 } from './x402-evm.ts';

/** The public facilitator the x402 packages default to (testnets; no key needed). */
const DEFAULT_FACILITATOR_URL = 'https://x402.org/facilitator';

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'expected an EVM address: 0x and 40 hex digits');

/** Base Sepolia: x402's own default (a testnet: no real money moves until the operator picks a network). */
const DEFAULT_NETWORK = 'eip155:84532';

/** CAIP-2 ids of the EVM networks x402 v1 also names, so every challenge can be answered in both versions. */
let v1Names: Map<string, string> | undefined;
const v1NameOf = () => (v1Names ??= new Map(Object.entries(x402EvmV1().EVM_NETWORK_CHAIN_ID_MAP).map(([name, chainId]) => [`eip155:${chainId}`, name])));

const X402Env = z.object({
  SVC_X402_PAY_TO: address.optional(),
  SVC_X402_NETWORK: z
    .string()
    .default(DEFAULT_NETWORK)
    .refine(
      (network) => network === DEFAULT_NETWORK || v1NameOf().has(network),
      `expected a CAIP-2 EVM network x402 knows, such as eip155:84532 (Base Sepolia) or eip155:8453 (Base)`,
    ),
  SVC_X402_ASSET: address.optional(),
  SVC_X402_ASSET_NAME: z.string().min(1).optional(),
  SVC_X402_ASSET_VERSION: z.string().min(1).optional(),
  SVC_X402_FACILITATOR_URL: httpUrl.optional(),
  SVC_X402_FACILITATOR_TIMEOUT_MS: integer(100, 120_000, 'milliseconds').default(15_000),
});
type X402Env = z.output<typeof X402Env>;

/**
 * x402 pay-per-call: pay-to address, network, asset, facilitator. Without `SVC_X402_PAY_TO` the
 * pay-per-call route answers 503 and nothing else changes. The asset defaults to the network's
 * USDC; another token needs its EIP-712 domain name and version (`SVC_X402_ASSET_NAME`,
 * `SVC_X402_ASSET_VERSION`) because payers sign over them. Its result type is declared below
 * rather than derived: most of it is looked up in x402's tables, not read from a variable.
 */
export const x402ConfigFrom = X402Env.transform((env, context): X402Config => {
  const config = x402ConfigOf(env);
  if ('error' in config) {
    context.addIssue({ code: 'custom', message: config.error, input: env });
    return z.NEVER;
  }
  return config;
});

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
  /**
   * Set only when x402 is not configured: the default network's asset and names come from
   * x402's tables, whose first read loads `@x402/evm` and `viem` (about 900 modules, ~500 ms).
   * This reads them in a worker thread (x402-defaults-worker.ts, or `workerModule` in tests) and
   * answers the whole config.
   */
  resolveDefaults?: (workerModule?: URL) => Promise<X402Config>;
}

/** The table entries that x402-defaults-worker.ts reads off the main thread. */
export type X402Defaults = Pick<X402Config, 'networkV1' | 'asset' | 'assetName' | 'assetVersion'>;

function defaultAssetOf(network: string) {
  try {
    return x402Evm().getDefaultAsset(network as `${string}:${string}`);
  } catch {
    return undefined;
  }
}

/**
 * The x402 settings. When any is set they are resolved now, so a wrong one stops the server at
 * start. When none is (pay-per-call off, every value x402's default), the network's asset and
 * names are looked up in x402's tables only when the discovery document is first read, and in a
 * worker thread (`resolveDefaults`): the main thread of a server that never takes an x402
 * payment never loads them (see x402-evm.ts).
 */
function x402ConfigOf(env: X402Env): X402Config | { error: string } {
  const configured =
    env.SVC_X402_PAY_TO !== undefined ||
    env.SVC_X402_NETWORK !== DEFAULT_NETWORK ||
    env.SVC_X402_ASSET !== undefined ||
    env.SVC_X402_ASSET_NAME !== undefined ||
    env.SVC_X402_ASSET_VERSION !== undefined;
  if (configured) return resolveX402Config(env);
  let resolved: X402Defaults | undefined;
  // Read synchronously only by a caller that did not await resolveDefaults (none in the server).
  const defaults = (): X402Defaults => (resolved ??= x402Defaults(env.SVC_X402_NETWORK));
  let inWorker: Promise<X402Config> | undefined;
  const config: X402Config = {
    payTo: undefined,
    network: env.SVC_X402_NETWORK,
    chainId: Number(env.SVC_X402_NETWORK.split(':')[1]),
    facilitatorUrl: facilitatorUrlOf(env),
    facilitatorTimeoutMs: env.SVC_X402_FACILITATOR_TIMEOUT_MS,
    get networkV1() {
      return defaults().networkV1;
    },
    get asset() {
      return defaults().asset;
    },
    get assetName() {
      return defaults().assetName;
    },
    get assetVersion() {
      return defaults().assetVersion;
    },
  };
  const { payTo, network, chainId, facilitatorUrl, facilitatorTimeoutMs } = config;
  config.resolveDefaults = (workerModule = workerModuleUrl('x402-defaults-worker')) =>
    (inWorker ??= runWorkerOnce<X402Defaults>(workerModule, network, DEFAULTS_DEADLINE_MS).then(
      (found) => ({ payTo, network, chainId, facilitatorUrl, facilitatorTimeoutMs, ...(resolved ??= found) }),
      (error: unknown) => {
        inWorker = undefined;
        throw error;
      },
    ));
  return config;
}

/** Loading x402's modules takes ~500 ms of a thread; this is for a machine under heavy load. */
const DEFAULTS_DEADLINE_MS = 30_000;

/** x402's defaults on an unconfigured server's network (what x402-defaults-worker.ts answers). */
export function x402Defaults(network: string): X402Defaults {
  // Only the network matters: the facilitator fields of the result are not kept.
  const result = resolveX402Config({ SVC_X402_NETWORK: network, SVC_X402_FACILITATOR_TIMEOUT_MS: 0 });
  if ('error' in result) throw new Error(`x402's defaults cannot be resolved: ${result.error}`);
  return { networkV1: result.networkV1, asset: result.asset, assetName: result.assetName, assetVersion: result.assetVersion };
}

const facilitatorUrlOf = (env: X402Env) => withoutTrailingSlash(env.SVC_X402_FACILITATOR_URL ?? DEFAULT_FACILITATOR_URL);

function resolveX402Config(env: X402Env): X402Config | { error: string } {
  const network = env.SVC_X402_NETWORK;
  const known = env.SVC_X402_ASSET ? x402Evm().findDefaultAsset(env.SVC_X402_ASSET, network as `${string}:${string}`) : defaultAssetOf(network);
  const asset = env.SVC_X402_ASSET ?? known?.asset;
  if (!asset) return { error: `SVC_X402_ASSET: ${network} has no default stablecoin in x402; set the token contract address` };
  const assetName = env.SVC_X402_ASSET_NAME ?? known?.name;
  const assetVersion = env.SVC_X402_ASSET_VERSION ?? known?.version;
  if (!assetName || !assetVersion)
    return {
      error: `SVC_X402_ASSET_NAME and SVC_X402_ASSET_VERSION: ${asset} is not a token x402 knows on ${network}; give its EIP-712 domain name and version`,
    };
  return {
    payTo: env.SVC_X402_PAY_TO,
    network,
    networkV1: v1NameOf().get(network)!,
    chainId: Number(network.split(':')[1]),
    asset,
    assetName,
    assetVersion,
    facilitatorUrl: facilitatorUrlOf(env),
    facilitatorTimeoutMs: env.SVC_X402_FACILITATOR_TIMEOUT_MS,
  };
}

declare module '../../server-config.ts' {
  interface FeatureConfigs {
    /** x402-config.ts's settings, read by the feature list's x402 line. */
    x402: X402Config;
  }
}
