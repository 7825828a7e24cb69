import { z } from 'zod';
import { flag, integer } from '../../env-values.ts';

/**
 * Stored responses (the Responses API's `store`): how long they are kept, and whether a request
 * that does not say is stored. OpenAI keeps them 30 days and stores by default; an operator who
 * would rather keep nothing unasked sets SVC_RESPONSES_STORE_DEFAULT=false.
 */
export const responsesConfigFrom = z
  .object({
    SVC_RESPONSES_RETENTION_DAYS: integer(1, 3650, 'days').default(30),
    SVC_RESPONSES_STORE_DEFAULT: flag.default(true),
    SVC_RESPONSES_WEBHOOK_URL: z.url({ protocol: /^https$/, error: 'an https URL' }).optional(),
    SVC_RESPONSES_WEBHOOK_SECRET: z
      .string()
      .refine((value) => value.startsWith('whsec_') && value.length > 'whsec_'.length, 'a secret of the form whsec_<base64>')
      .optional(),
    SVC_RESPONSES_WEBHOOK_ATTEMPTS: integer(1, 50, 'an attempt count').default(8),
    SVC_RESPONSES_WEBHOOK_RETRY_BASE_MS: integer(10, 3_600_000, 'milliseconds').default(5_000),
    SVC_RESPONSES_WEBHOOK_TIMEOUT_MS: integer(100, 120_000, 'milliseconds').default(10_000),
    SVC_RESPONSES_WEBHOOK_RETENTION_DAYS: integer(1, 3650, 'days').default(30),
  })
  .refine((env) => !env.SVC_RESPONSES_WEBHOOK_URL || env.SVC_RESPONSES_WEBHOOK_SECRET, {
    message: 'SVC_RESPONSES_WEBHOOK_URL needs SVC_RESPONSES_WEBHOOK_SECRET (whsec_...) to sign its deliveries',
    path: ['SVC_RESPONSES_WEBHOOK_SECRET'],
  })
  .transform((env) => ({
    retentionDays: env.SVC_RESPONSES_RETENTION_DAYS,
    storeByDefault: env.SVC_RESPONSES_STORE_DEFAULT,
    /** Where finished background responses are announced (none: no webhooks), and how deliveries are retried. */
    webhook: {
      url: env.SVC_RESPONSES_WEBHOOK_URL,
      secret: env.SVC_RESPONSES_WEBHOOK_SECRET ?? '',
      attempts: env.SVC_RESPONSES_WEBHOOK_ATTEMPTS,
      /** The wait before the second attempt; each later wait doubles it (at most 10 minutes). */
      retryBaseMs: env.SVC_RESPONSES_WEBHOOK_RETRY_BASE_MS,
      timeoutMs: env.SVC_RESPONSES_WEBHOOK_TIMEOUT_MS,
      /** How long a delivered or failed delivery is listed (`GET /v1/webhooks/deliveries`) before the prune deletes it. */
      retentionDays: env.SVC_RESPONSES_WEBHOOK_RETENTION_DAYS,
    },
  }));

export type ResponsesConfig = z.output<typeof responsesConfigFrom>;
export type WebhookConfig = ResponsesConfig['webhook'];

declare module '../../server-config.ts' {
  interface FeatureConfigs {
    /** responses-config.ts's settings, read by the feature list's responses line. */
    responses: ResponsesConfig;
  }
}
