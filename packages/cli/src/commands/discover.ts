import type { Command } from 'commander';
import { A2A_TRIAL_TASK_ID, type A2aAgentCard, type McpServerCard } from '@svc/schemas';
import { withContext } from '../context.ts';
import { table } from '../output.ts';

function mcpSummary(card: McpServerCard): string {
  return [
    `MCP server ${card.serverInfo.name} ${card.version} (${card.name})`,
    `  endpoint   ${card.transport.endpoint} (Streamable HTTP)`,
    `  revisions  ${card.supportedProtocolVersions.join(', ')}`,
    `  tools      ${card.tools.map((tool) => tool.name).join(', ')}`,
    `  auth       ${card.authentication.required ? 'required' : 'not required'}; metadata ${card.authentication.protectedResourceMetadata}`,
  ].join('\n');
}

function agentSummary(card: A2aAgentCard): string {
  return [
    `A2A agent ${card.name} ${card.version}`,
    `  endpoint   ${card.url} (${card.preferredTransport}; A2A ${card.supportedInterfaces.map((entry) => entry.protocolVersion).join(', ')})`,
    table(card.skills.map((skill) => [`  skill`, skill.id, skill.name])),
  ].join('\n');
}

/** `svc discover`: the discovery documents an agent framework reads, and the A2A trial. */
export function registerDiscoverCommands(program: Command): void {
  const discover = program
    .command('discover')
    .description('What svc offers to agents: the MCP server card, the A2A agent card, and the A2A public trial')
    .action(
      withContext(async (cli) => {
        const client = cli.client();
        const [mcp, agent] = await Promise.all([client.discovery.mcpServerCard(), client.discovery.agentCard()]);
        cli.output.result({ mcp, agent }, (both) => `${mcpSummary(both.mcp)}\n\n${agentSummary(both.agent)}`);
      }),
    );
  discover
    .command('mcp')
    .description('The MCP server card (/.well-known/mcp/server-card.json)')
    .action(withContext(async (cli) => cli.output.result(await cli.client().discovery.mcpServerCard(), mcpSummary)));
  discover
    .command('a2a')
    .description('The A2A agent card (/.well-known/agent-card.json)')
    .action(withContext(async (cli) => cli.output.result(await cli.client().discovery.agentCard(), agentSummary)));
  discover
    .command('trial')
    .description(`Send a message to /a2a (A2A 0.3 message/send, no credential) and print the public trial task ${A2A_TRIAL_TASK_ID}`)
    .argument('[text...]', 'the message (it is not run or kept; the answer is the same task)', ['What is svc?'])
    .action(
      withContext(async (cli, words: string[]) => {
        const answer = await cli.client().discovery.a2a({
          body: {
            jsonrpc: '2.0',
            id: 'svc-cli',
            method: 'message/send',
            params: { message: { kind: 'message', messageId: `svc-cli-${Date.now()}`, role: 'user', parts: [{ kind: 'text', text: words.join(' ') }] } },
          },
        });
        if (!('result' in answer)) throw new Error('/a2a answered an event stream to message/send');
        const task = answer.result as { id: string; status: { state: string; message: { parts: Array<{ text?: string }> } } };
        cli.output.result(task, (trial) => `${trial.id} (${trial.status.state})\n\n${trial.status.message.parts.map((part) => part.text ?? '').join('\n')}`);
      }),
    );
}
