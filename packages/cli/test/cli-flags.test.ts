import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { runCli } from './helpers/run-cli.ts';

/**
 * Flags checked with each route's own schema, as a process. The server here counts requests and
 * answers none usefully: a refused flag must exit 2 before anything is sent.
 */
let requests = 0;
let server: Server;
let env: Record<string, string>;
test.before(async () => {
  server = createServer((_request, response) => {
    requests += 1;
    response.writeHead(500).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  env = { SVC_BASE_URL: url, SVC_TOKEN: 'unused' };
});
test.after.always(() => server?.close());

const refusals: Array<[string[], RegExp]> = [
  [['trending', '--limit', '500'], /--limit must be an integer from 1 to 100/],
  [['radar', '--limit', '26'], /--limit must be an integer from 1 to 25/],
  [['request', 'status', '--limit', 'ten'], /--limit takes a whole number, not "ten"/],
  [['board', 'put', '--key', 'k', 'hello', '--expires-in', '59'], /--expires-in must be an integer from 60 to 7776000/],
  [['board', 'query', '--q', ''], /--q takes 1 to 200 characters/],
  [['board', 'get', 'k', '--limit', '201'], /--limit must be an integer from 1 to 200 \(with --all, any number of 1 or more\)/],
  [['search', 'x'.repeat(501)], /the search words takes at most 500 characters/],
  [['artifact', 'files', 'org/model', '--limit', '501'], /--limit must be an integer from 1 to 500/],
  [['billing', 'usage', '--all', '--limit', '0'], /--limit must be a whole number of 1 or more/],
  [['rerank', '--query', 'q', 'a', '--top-n', '0'], /--top-n must be an integer from 1 to 1000/],
  [['summarize', '-', '--sentences', '51'], /--sentences must be an integer from 1 to 50/],
];

test("a flag past the contract's bound is a usage error naming the flag and the limit, and nothing is sent", async (t) => {
  for (const [args, message] of refusals) {
    const run = await runCli(args, { env, input: 'Some text to summarise. It has two sentences.' });
    t.is(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
    t.regex(run.stderr, message, args.join(' '));
  }
  t.is(requests, 0, 'every refusal came before a request');
});

test("help texts read their bounds and defaults from the contract (the spec's page sizes)", async (t) => {
  const radar = await runCli(['radar', '--help'], { env });
  t.regex(radar.stdout, /1\.\.25, default 10/);
  const keys = await runCli(['keys', 'list', '--help'], { env });
  t.regex(keys.stdout, /keys per page \(1\.\.100, default 50\)/);
  const status = await runCli(['request', 'status', '--help'], { env });
  t.regex(status.stdout, /1\.\.100, default 25/);
  const usage = await runCli(['billing', 'usage', '--help'], { env });
  t.regex(usage.stdout, /receipts per page \(1\.\.100, default 50\)/);
});

/** The cursor lists' commands (routes with `paging: cursorPaging`), and whether the route has an operator view. */
const cursorListCommands: Array<[string[], string, boolean]> = [
  [['keys', 'list'], 'keys', true],
  [['keys', 'receipts', 'k'], 'receipts', false],
  [['keys', 'usage', 'k'], 'rows', false],
  [['jobs', 'list'], 'jobs', false],
  [['billing', 'usage'], 'receipts', false],
  [['responses', 'webhook-deliveries'], 'deliveries', false],
];

test('every cursor list command takes the same paging flags, read from its route: --limit, --cursor, --all, and --everyone where the route has an operator view', async (t) => {
  for (const [args, items, everyone] of cursorListCommands) {
    const help = (await runCli([...args, '--help'], { env })).stdout.replace(/\s+/g, ' ');
    const name = args.join(' ');
    t.regex(help, new RegExp(`--limit <n> ${items} per page \\(1\\.\\.\\d+, default \\d+\\); with --all, the most ${items} in total`), name);
    t.regex(help, /--cursor <cursor> continue from a previous page/, name);
    t.regex(help, /--all walk every page/, name);
    t.is(help.includes('--everyone'), everyone, name);
  }
});
