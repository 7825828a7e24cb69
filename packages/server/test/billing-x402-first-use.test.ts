/**
 * x402's modules (`@x402/evm` and `viem`, about 900 modules) are heavy to load: on an
 * unconfigured server the first read of /.well-known/x402 loaded them on the main thread
 * (~500 ms), and on a configured one the first payment loaded `viem`'s entry (113 ms more).
 * Unconfigured, the default tables are read in a worker thread; configured, `viem` is loaded at
 * start, before the server listens. The server runs in this process, so its module cache shows
 * what its main thread loaded. The tests run in order: the first must see a process without x402.
 */
import { createRequire } from 'node:module';
import test from 'ava';
import { startTestServer } from '@svc/testing/test-server';

const serverRequire = createRequire(new URL('../src/features/billing/x402-evm.ts', import.meta.url));
const loaded = (specifier: string) => serverRequire.cache[serverRequire.resolve(specifier)] !== undefined;

test.serial('unconfigured: the discovery document names the default network and token without loading x402 on the main thread', async (t) => {
  const svc = await startTestServer();
  try {
    const response = await fetch(`${svc.baseUrl}/.well-known/x402`);
    t.is(response.status, 200);
    t.like(await response.json(), {
      enabled: false,
      network: 'eip155:84532',
      network_v1: 'base-sepolia',
      asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
      asset_name: 'USDC',
      asset_version: '2',
    });
    t.false(loaded('@x402/evm'));
    t.false(loaded('viem'));
  } finally {
    await svc.close();
  }
});

test.serial('configured: viem is loaded when the server starts, before any payment', async (t) => {
  const svc = await startTestServer({ env: { SVC_X402_PAY_TO: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C' } });
  try {
    t.true(loaded('viem'));
  } finally {
    await svc.close();
  }
});
