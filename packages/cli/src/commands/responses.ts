import type { Command } from 'commander';
import { responsesContract, type ResponseObject, type WebhookDelivery } from '@svc/schemas';
import { withContext } from '../context.ts';
import { cursorListOptions, type CursorListFlags, printCursorList } from '../list-output.ts';
import { table } from '../output.ts';

/** The text of a response's message items, as OpenAI's `output_text` joins it. */
function outputText(response: ResponseObject): string {
  return response.output
    .flatMap((item) => (item.type === 'message' && Array.isArray(item.content) ? (item.content as Array<{ type?: string; text?: string }>) : []))
    .flatMap((part) => (part.type === 'output_text' && typeof part.text === 'string' ? [part.text] : []))
    .join('');
}

/** A stored response as a person reads it: who, when, how it ended, what it used, then its text and calls. */
function renderResponse(response: ResponseObject): string {
  const usage = response.usage ? `${response.usage.input_tokens} in, ${response.usage.output_tokens} out` : '';
  const calls = response.output.flatMap((item) => (item.type === 'function_call' ? [`${String(item.name)}(${String(item.arguments)})`] : []));
  return [
    table([
      ['id', response.id],
      ['status', response.status],
      ['model', response.model],
      ['created', new Date(response.created_at * 1000).toISOString()],
      ...(response.previous_response_id ? [['previous', response.previous_response_id]] : []),
      ...(usage ? [['usage', usage]] : []),
      ...(calls.length > 0 ? [['calls', calls.join(', ')]] : []),
    ]),
    '',
    outputText(response),
  ].join('\n');
}

/** `svc responses get|delete <id>`: the caller's stored Responses API answers. */
export function registerResponsesCommands(program: Command): void {
  const responses = program.command('responses').description('Your stored responses of the Responses API (POST /v1/responses with store)');
  responses
    .command('get <id>')
    .description('One stored response: status, model, usage and its text (404 for an id that is not yours or past its retention)')
    .action(
      withContext(async (cli, id: string) => {
        // Asked without `stream=true`, the answer is the response's JSON, never a stream.
        cli.output.result((await cli.client().responses.retrieve({ params: { response_id: id } })) as ResponseObject, renderResponse);
      }),
    );
  responses
    .command('delete <id>')
    .description('Delete a stored response: it can no longer be retrieved nor continued with previous_response_id')
    .action(
      withContext(async (cli, id: string) => {
        cli.output.result(await cli.client().responses.delete({ params: { response_id: id } }), (deleted) => `deleted ${deleted.id}`);
      }),
    );
  registerWebhookDeliveries(responses);
}

/** A delivery as a row: what an operator scans for (which response, how it went, why the last attempt failed). */
const deliveryRow = (delivery: WebhookDelivery): string[] => [
  delivery.id,
  delivery.event_type,
  delivery.response_id,
  delivery.status,
  String(delivery.attempts),
  delivery.last_error ?? (delivery.last_status === null ? '-' : String(delivery.last_status)),
  delivery.created_at,
];

/** `svc responses webhook-deliveries`: GET /v1/webhooks/deliveries (the operator's every one, an agent's to its keys' endpoints), its flags checked by the contract. */
function registerWebhookDeliveries(responses: Command): void {
  const route = responsesContract.webhookDeliveries;
  cursorListOptions(
    responses
      .command('webhook-deliveries')
      .description(
        "Webhook deliveries of background responses, newest first: status, attempts, the last error (the operator token: every one; an agent: its keys' own endpoints)",
      )
      .option('--key <credential_id>', "only the deliveries to this developer key's own endpoint"),
    route,
    'deliveries',
  ).action(
    withContext(async (cli, flags: CursorListFlags & { key?: string }) => {
      await printCursorList(cli, route, flags, {
        method: cli.client().responses.webhookDeliveries,
        filters: { credential_id: flags.key },
        flagNames: { credential_id: '--key' },
        header: ['EVENT', 'TYPE', 'RESPONSE', 'STATUS', 'ATTEMPTS', 'LAST', 'CREATED'],
        row: deliveryRow,
        empty: 'No webhook deliveries.',
      });
    }),
  );
}
