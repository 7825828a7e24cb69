import { createRequire } from 'node:module';

/**
 * `@x402/evm` and `viem`, loaded on first use: together about 900 modules and a quarter of a
 * second of every start (bench/cold-start), which a server without pay-per-call never needs.
 * Loaded with `require` (their CommonJS builds) so that the settings, which are read
 * synchronously, and the payment check share one copy.
 */
const require = createRequire(import.meta.url);
let evm: typeof import('@x402/evm') | undefined;
let evmV1: typeof import('@x402/evm/v1') | undefined;
let viem: typeof import('viem') | undefined;

export const x402Evm = () => (evm ??= require('@x402/evm') as typeof import('@x402/evm'));
export const x402EvmV1 = () => (evmV1 ??= require('@x402/evm/v1') as typeof import('@x402/evm/v1'));
export const viemLibrary = () => (viem ??= require('viem') as typeof import('viem'));
