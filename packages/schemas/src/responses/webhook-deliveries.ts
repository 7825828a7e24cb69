import { z } from 'zod';
import { cursorList, cursorQuery } from '../cursor-list.ts';
import { cursorPaging } from '../cursor-paging.ts';
import { defineRoute } from '../route.ts';

/** One delivery of a webhook event to the operator's endpoint (`SVC_RESPONSES_WEBHOOK_URL`) or a key's, as `svc_webhook_deliveries` holds it. */
export const WebhookDelivery = z
  .object({
    id: z.string().describe('The event id (`evt_...`), also the `webhook-id` header the endpoint got: deduplicate by it.'),
    event_type: z.enum(['response.completed', 'response.failed', 'response.cancelled', 'response.incomplete']),
    response_id: z.string().describe('The background response the event announces.'),
    credential_id: z
      .string()
      .nullable()
      .describe("The developer key whose own endpoint (`PUT /v1/developer/credentials/{id}/webhook`) the delivery goes to; null for the operator's endpoint."),
    status: z.enum(['pending', 'delivered', 'failed']).describe('`pending`: not yet answered 2xx and attempts remain; `failed`: every attempt refused.'),
    attempts: z.number().int().nonnegative().describe('Attempts made so far (SVC_RESPONSES_WEBHOOK_ATTEMPTS at most).'),
    last_status: z.number().int().nullable().describe('The HTTP status of the last attempt; null when it got no answer (or none was made).'),
    last_error: z.string().nullable().describe('Why the last attempt failed; null when it was delivered or none was made.'),
    created_at: z.string().datetime(),
    delivered_at: z.string().datetime().nullable(),
  })
  .meta({ id: 'WebhookDelivery' });
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

export const WebhookDeliveryListResponse = cursorList(WebhookDelivery, { object: true, order: 'Newest first' }).meta({ id: 'WebhookDeliveryListResponse' });
export type WebhookDeliveryListResponse = z.infer<typeof WebhookDeliveryListResponse>;

export const WebhookDeliveryQuery = cursorQuery({ max: 100, default: 20 }).extend({
  credential_id: z.string().min(1).max(100).optional().describe("Only this developer key's"),
});

/** Webhook deliveries a page at a time: the operator's view (every principal's responses), or an agent's of its keys' endpoints. */
export const webhookDeliveriesRoute = defineRoute({
  method: 'GET',
  path: '/v1/webhooks/deliveries',
  surface: 'base',
  tags: ['responses'],
  auth: { kind: 'bearer', principals: ['operator', 'agent'] },
  summary: "Webhook deliveries of background responses, newest first, by cursor (an agent: its keys' own)",
  description:
    "Every event sent or being sent to `SVC_RESPONSES_WEBHOOK_URL` or to a developer key's own endpoint (`credential_id`), whoever made the response: its type, the response, the delivery status, the attempts made, " +
    "the last attempt's HTTP status or error, and when it was created and delivered. The payload and the endpoint's URL are not shown. Reading changes nothing. " +
    "An agent's OAuth bearer reads only the deliveries to its own keys' endpoints (`PUT /v1/developer/credentials/{id}/webhook`), none to the operator's. " +
    '`credential_id` keeps those of one key (a key of no one else: an empty page).',
  query: WebhookDeliveryQuery,
  paging: cursorPaging,
  errors: [403],
  responses: { 200: WebhookDeliveryListResponse },
});
