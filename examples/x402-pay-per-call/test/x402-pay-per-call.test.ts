import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import test from 'ava';
import { startFakeFacilitator, type FakeFacilitator } from '@svc/testing/fake-facilitator';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { runEnv } from '@svc/testing/run';

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const run = promisify(execFile);
/** Hardhat's first account: a public, throwaway test key, funded only by the fake facilitator. */
const WALLET_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
const WALLET = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const PAY_TO = '0x1111111111111111111111111111111111111111';

// Serial: one test counts the facilitator's settled transfers, which another paying test would change.
let facilitator: FakeFacilitator;
let svc: TestServer;
let unconfigured: TestServer;
test.before(async () => {
  // No facilitator nor chain is reachable here: the fake one speaks the x402 facilitator wire format.
  facilitator = await startFakeFacilitator();
  [svc, unconfigured] = await Promise.all([
    startTestServer({ env: { SVC_X402_PAY_TO: PAY_TO, SVC_X402_FACILITATOR_URL: facilitator.url } }),
    startTestServer(),
  ]);
});
test.after.always(async () => {
  await Promise.all([svc?.close(), unconfigured?.close()]);
  await facilitator?.close();
});

const runExample = (server: TestServer, env: Record<string, string | undefined>) =>
  run(process.execPath, [MAIN, 'What is svc?'], { env: runEnv({ SVC_BASE_URL: server.baseUrl, ...env }), timeout: 60_000 });

test.serial('the example reads the terms, pays one call with @x402/fetch and prints the settled receipt', async (t) => {
  const { stdout } = await runExample(svc, { WALLET_KEY });
  const lines = stdout.trim().split('\n');
  t.is(lines[0], `terms: 5000 base units of USDC on eip155:84532 to ${PAY_TO}`);
  t.regex(lines[1]!, /^answer \(svc-extractive-chat\): \S/);
  const paid = /^paid: settled by (0x[0-9a-fA-F]{40}) in (0x[0-9a-f]+) on eip155:84532$/.exec(lines[2]!);
  t.truthy(paid, stdout);
  t.is(paid![1], WALLET);
  const transfer = facilitator.transfers.find((entry) => entry.transaction === paid![2]);
  t.like(transfer, { from: WALLET, to: PAY_TO, value: 5000n }, 'the receipt names the transfer the facilitator settled');
});

test.serial('against an svc without x402 configured it says so and exits 1, paying nothing', async (t) => {
  const settled = facilitator.transfers.length;
  const error = await t.throwsAsync<Error & { code: number; stderr: string }>(runExample(unconfigured, { WALLET_KEY }));
  t.is(error!.code, 1);
  t.regex(error!.stderr, /SVC_X402_PAY_TO/);
  t.is(facilitator.transfers.length, settled);
});

test.serial('a missing or malformed wallet key stops before any request', async (t) => {
  for (const key of [undefined, '0x1234']) {
    const error = await t.throwsAsync<Error & { code: number; stderr: string }>(runExample(svc, { WALLET_KEY: key }));
    t.is(error!.code, 2);
    t.regex(error!.stderr, /set WALLET_KEY/);
  }
});
