import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { runCli } from './helpers/run-cli.ts';

let svc: TestServer;
test.before(async () => {
  svc = await startTestServer();
});
test.after.always(async () => {
  await svc?.close();
});

test('svc discover prints where the MCP endpoint and the A2A endpoint are; --json gives both cards', async (t) => {
  const text = await runCli(['discover'], { env: { SVC_BASE_URL: svc.baseUrl } });
  t.is(text.code, 0, text.stderr);
  t.true(text.stdout.includes(`endpoint   ${svc.baseUrl}/mcp (Streamable HTTP)`), text.stdout);
  t.true(text.stdout.includes(`endpoint   ${svc.baseUrl}/a2a (JSONRPC; A2A 1.0, 0.3)`), text.stdout);
  t.regex(text.stdout, /revisions {2}2026-07-28, 2025-11-25/);
  const json = await runCli(['discover', '--json'], { env: { SVC_BASE_URL: svc.baseUrl } });
  t.is(json.code, 0, json.stderr);
  const both = JSON.parse(json.stdout);
  t.deepEqual(both.mcp, await (await fetch(`${svc.baseUrl}/.well-known/mcp.json`)).json());
  t.deepEqual(both.agent, await (await fetch(`${svc.baseUrl}/agents.json`)).json());
});

test('svc discover mcp and a2a print one card each, as JSON with --json', async (t) => {
  const mcp = await runCli(['discover', 'mcp', '--json'], { env: { SVC_BASE_URL: svc.baseUrl } });
  t.is(mcp.code, 0, mcp.stderr);
  t.is(JSON.parse(mcp.stdout).transport.endpoint, `${svc.baseUrl}/mcp`);
  const a2a = await runCli(['discover', 'a2a'], { env: { SVC_BASE_URL: svc.baseUrl } });
  t.is(a2a.code, 0, a2a.stderr);
  t.regex(a2a.stdout, /skill +public-trial/);
});

test('svc discover trial sends an A2A message and prints the trial reply', async (t) => {
  const text = await runCli(['discover', 'trial', 'how', 'do', 'I', 'start?'], { env: { SVC_BASE_URL: svc.baseUrl } });
  t.is(text.code, 0, text.stderr);
  t.regex(text.stdout, /^svc-public-trial-v1 \(completed\)/);
  t.true(text.stdout.includes(`${svc.baseUrl}/oauth/register`));
  const json = await runCli(['discover', 'trial', '--json'], { env: { SVC_BASE_URL: svc.baseUrl } });
  t.is(json.code, 0, json.stderr);
  t.is(JSON.parse(json.stdout).id, 'svc-public-trial-v1');
});
