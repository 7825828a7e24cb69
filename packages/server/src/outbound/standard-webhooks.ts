import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signing (standardwebhooks.com, as OpenAI signs its webhooks and as `openai`'s
 * `client.webhooks.unwrap` verifies): the signed content is `<webhook-id>.<webhook-timestamp>.<body>`,
 * its HMAC-SHA256 under the secret's bytes (base64 after the `whsec_` prefix) goes in
 * `webhook-signature` as `v1,<base64>`.
 */
export function signedHeaders(secret: string, id: string, body: string, now = Date.now()): Record<string, string> {
  const timestamp = String(Math.floor(now / 1000));
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}

/** A new secret in the `whsec_` form (32 random bytes). */
export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;
