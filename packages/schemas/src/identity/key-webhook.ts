import { z } from 'zod';

/** The longest endpoint URL a key's webhook takes. */
export const MAX_KEY_WEBHOOK_URL_LENGTH = 2048;

/** `PUT /v1/developer/credentials/{credential_id}/webhook`: where the key's background responses are announced. */
export const KeyWebhookSetRequest = z
  .object({
    url: z
      .url({ protocol: /^https$/, error: 'an https URL' })
      .max(MAX_KEY_WEBHOOK_URL_LENGTH)
      .describe(
        'The https endpoint that receives response.completed, .failed, .cancelled and .incomplete of background responses made with this key. ' +
          'Its host must resolve only to public unicast addresses, as for a PDF fetched by URL (422 `source_url_refused`).',
      ),
  })
  .strict()
  .meta({ id: 'KeyWebhookSetRequest' });
export type KeyWebhookSetRequest = z.infer<typeof KeyWebhookSetRequest>;

/** A key's webhook endpoint as set; the signing secret only in the answer that made it. */
export const KeyWebhook = z
  .object({
    object: z.literal('developer_key.webhook'),
    credential_id: z.string(),
    url: z.string().describe('The endpoint deliveries go to'),
    created_at: z.string().datetime().describe('When this endpoint and its secret were set'),
  })
  .meta({ id: 'KeyWebhook' });
export type KeyWebhook = z.infer<typeof KeyWebhook>;

/** The answer of setting a key's webhook: the only place its signing secret ever appears. */
export const KeyWebhookSecretResponse = KeyWebhook.extend({
  secret: z
    .string()
    .describe(
      "The Standard Webhooks signing secret (`whsec_...`) of this endpoint, new each time it is set: verify deliveries with it (openai's `client.webhooks.unwrap`). Shown once, store it now.",
    ),
}).meta({ id: 'KeyWebhookSecretResponse' });
export type KeyWebhookSecretResponse = z.infer<typeof KeyWebhookSecretResponse>;

export const KeyWebhookRemoveResponse = z
  .object({ object: z.literal('developer_key.webhook'), credential_id: z.string(), deleted: z.boolean().describe('false when the key had none') })
  .meta({ id: 'KeyWebhookRemoveResponse' });
export type KeyWebhookRemoveResponse = z.infer<typeof KeyWebhookRemoveResponse>;
