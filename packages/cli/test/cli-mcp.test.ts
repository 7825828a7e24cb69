import test from 'ava';
import { agentTools, contract, principalMayCall, type Principal } from '@svc/schemas';
import { signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { runCli } from './helpers/run-cli.ts';

let svc: TestServer;
test.before(async () => {
  svc = await startTestServer();
});
test.after.always(async () => {
  await svc?.close();
});

test('svc mcp tools prints the tools the credential sees; --json the list with schemas', async (t) => {
  const { session } = await signInAgent(svc, 'models:read');
  const env = { SVC_BASE_URL: svc.baseUrl, SVC_TOKEN: session.accessToken };
  const run = await runCli(['mcp', 'tools'], { env });
  t.is(run.code, 0, run.stderr);
  t.regex(run.stdout, /^TOOL\s+TRAITS\s+OPERATION/);
  t.regex(run.stdout, /\nmodels_list\s+read-only\s+/);
  t.notRegex(run.stdout, /inference_rerank/, 'a tool the token lacks the scope of is not shown');

  const listed = JSON.parse((await runCli(['--json', 'mcp', 'tools'], { env })).stdout) as Array<{ name: string; inputSchema: { type: string } }>;
  const narrowed: Principal = { kind: 'agent', id: 'x', scopes: ['models:read'], credential: 'oauth_access_token' };
  t.deepEqual(
    listed.map((tool) => tool.name),
    agentTools(contract)
      .filter((tool) => principalMayCall(tool.route, narrowed))
      .map((tool) => tool.name),
  );
  t.is(listed[0]!.inputSchema.type, 'object');

  const operator = await runCli(['--json', 'mcp', 'tools'], { env: { SVC_BASE_URL: svc.baseUrl, SVC_TOKEN: svc.operatorToken } });
  t.true((JSON.parse(operator.stdout) as Array<{ name: string }>).some((tool) => tool.name === 'inference_rerank'));
});
