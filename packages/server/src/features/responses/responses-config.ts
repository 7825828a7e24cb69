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
  })
  .transform((env) => ({ retentionDays: env.SVC_RESPONSES_RETENTION_DAYS, storeByDefault: env.SVC_RESPONSES_STORE_DEFAULT }));

export type ResponsesConfig = z.output<typeof responsesConfigFrom>;
