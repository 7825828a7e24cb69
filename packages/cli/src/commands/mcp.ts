import type { Command } from 'commander';
import { withContext } from '../context.ts';
import { CliFailure } from '../failure.ts';
import { table } from '../output.ts';

/** The revision `svc mcp tools` speaks: stateless, so one request needs no `initialize` first. */
const REVISION = '2026-07-28';

interface ListedTool {
  name: string;
  title?: string;
  description?: string;
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean };
  _meta?: { 'svc/operation'?: string };
}

const traits = (tool: ListedTool) =>
  [
    tool.annotations?.readOnlyHint ? 'read-only' : '',
    tool.annotations?.destructiveHint ? 'destructive' : '',
    tool.annotations?.idempotentHint && !tool.annotations.readOnlyHint ? 'idempotent' : '',
  ]
    .filter(Boolean)
    .join(',');

/** A listed tool has no title (kept small for the model's context, docs/agents.md): its description's first line is the route's summary. */
const whatItDoes = (tool: ListedTool) => tool.title ?? tool.description?.split('\n', 1)[0] ?? '';

export function registerMcpCommands(program: Command): void {
  const mcp = program.command('mcp').description('The MCP server at {base}/mcp: every agent operation of the API as a tool (docs/agents.md)');
  mcp
    .command('tools')
    .description('The tools your credential may call at {base}/mcp (its tools/list): name, traits, what it does; --json the whole list with schemas')
    .action(
      withContext(async (cli) => {
        const body = {
          jsonrpc: '2.0' as const,
          id: 1,
          method: 'tools/list',
          params: {
            _meta: {
              'io.modelcontextprotocol/protocolVersion': REVISION,
              'io.modelcontextprotocol/clientCapabilities': {},
              'io.modelcontextprotocol/clientInfo': { name: 'svc-cli', version: '1' },
            },
          },
        };
        const response = (await cli
          .client()
          .mcp.endpoint(
            { body },
            { headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': REVISION, 'mcp-method': 'tools/list' } },
          )) as Response;
        const answer = (await response.json()) as { result?: { tools: ListedTool[] }; error?: { code: number; message: string } };
        if (!answer.result) throw new CliFailure(`tools/list failed: ${answer.error?.message ?? 'no result'} (${answer.error?.code ?? response.status})`);
        const { tools } = answer.result;
        cli.output.result(tools, (list) =>
          list.length === 0 ? 'no tools' : table([['TOOL', 'TRAITS', 'OPERATION'], ...list.map((tool) => [tool.name, traits(tool) || '-', whatItDoes(tool)])]),
        );
      }),
    );
}
