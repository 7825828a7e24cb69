import test from 'ava';
import fc from 'fast-check';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { agentTools, contract, mcpContract, urlFor } from '@svc/schemas';
import { invalidVariants, validValue, type JsonSchema } from '@svc/testing/schema-arbitrary';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * `tools/list` is what a host puts into the model's context on every turn: the whole list, as the
 * official clients receive it, stays under 64 KiB at every served revision, and each listed input
 * schema (compacted, mcpToolListing) still refuses what the contract's own schema refuses.
 */
const LIST_BYTES_BELOW = 65_536;

let svc: TestServer;
test.before(async () => {
  svc = await startTestServer();
});
test.after.always(async () => {
  await svc?.close();
});

const endpoint = () => new URL(urlFor(svc.server.urls(), mcpContract.endpoint));
const requestInit = (token?: string) => (token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {});
type Listed = { tools: Array<{ name: string; inputSchema: Record<string, unknown> }> };

/** The official clients, unchanged, at the revisions they speak. */
const clients: Array<{ label: string; list: (token?: string) => Promise<Listed & { instructions?: string | undefined }> }> = [
  {
    label: 'v1 SDK, 2025-11-25',
    async list(token) {
      const client = new ClientV1({ name: 'svc-size', version: '1.0.0' });
      await client.connect(new TransportV1(endpoint(), requestInit(token)));
      try {
        return { ...(await client.listTools()), instructions: client.getInstructions() };
      } finally {
        await client.close();
      }
    },
  },
  {
    label: 'v2 client, 2026-07-28',
    async list(token) {
      const client = new ClientV2({ name: 'svc-size', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
      await client.connect(new TransportV2(endpoint(), requestInit(token)));
      try {
        return { ...(await client.listTools()), instructions: client.getInstructions() };
      } finally {
        await client.close();
      }
    },
  },
];

for (const { label, list } of clients) {
  test.serial(`${label}: the whole tools/list is under 64 KiB, without a credential (every tool) and as the operator`, async (t) => {
    for (const [who, token] of [
      ['anonymous', undefined],
      ['operator', svc.operatorToken],
    ] as const) {
      const { instructions, ...result } = await list(token);
      // Without a credential every tool is listed (the largest list); the operator's leaves out the tools for agents only.
      if (who === 'anonymous') t.is(result.tools.length, agentTools(contract).length, who);
      else t.true(result.tools.length > 0, who);
      const bytes = JSON.stringify(result).length;
      t.log(`${who}: ${result.tools.length} tools, ${bytes} characters`);
      t.true(bytes < LIST_BYTES_BELOW, `${who}: ${bytes} characters`);
      // The prose the tools share is said once, in the instructions.
      t.true(instructions?.includes('\n\nArguments several tools share:\n'), who);
      t.true(instructions?.includes('`model`: A model id from /v1/models'), who);
    }
  });
}

test.serial('every served 2025 revision: the raw tools/list answer is under 64 KiB', async (t) => {
  for (const revision of SUPPORTED_PROTOCOL_VERSIONS) {
    const response = await fetch(endpoint(), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': revision },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    const text = await response.text();
    const answer = JSON.parse(text) as { result?: Listed };
    if (!answer.result) t.log(revision, response.status, text.slice(0, 300));
    t.is(answer.result?.tools.length, agentTools(contract).length, revision);
    t.true(JSON.stringify(answer.result).length < LIST_BYTES_BELOW, revision);
  }
});

test.serial('each listed input schema accepts and refuses what the contract schema does', async (t) => {
  const { tools } = await clients[0]!.list();
  const byName = new Map(tools.map((tool) => [tool.name, tool.inputSchema]));
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
  let refusals = 0;
  for (const tool of agentTools(contract)) {
    const full = tool.inputSchema as JsonSchema;
    const contractValid = ajv.compile(full);
    const listedValid = ajv.compile(byName.get(tool.name)!);
    t.true(JSON.stringify(byName.get(tool.name)).length < JSON.stringify(full).length + 1, `${tool.name} is not larger`);
    for (const valid of fc.sample(validValue(full, full), { numRuns: 12, seed: 43 })) {
      // A refinement JSON Schema cannot say may make a drawn value invalid: the two schemas must agree on it either way.
      t.is(listedValid(valid), contractValid(valid), `${tool.name}: ${JSON.stringify(valid).slice(0, 200)}`);
      for (const { why, value } of invalidVariants(full, full, valid)) {
        if (contractValid(value)) continue;
        refusals++;
        t.false(listedValid(value), `${tool.name} (${why}) accepted ${JSON.stringify(value).slice(0, 200)}`);
      }
    }
  }
  t.log(`${refusals} invalid arguments refused by both`);
  t.true(refusals > 500);
});
