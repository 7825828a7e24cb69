import { z } from 'zod';

/** The longest range one usage report covers, in UTC days (a quarter). */
export const MAX_USAGE_REPORT_DAYS = 92;
/** The most keys and models a report lists, busiest first; `keys_truncated` / `models_truncated` say when more used the range. */
export const MAX_USAGE_REPORT_ROWS = 100;

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const utcDay = z
  .string()
  .regex(DAY, 'a UTC day, YYYY-MM-DD')
  .refine((value) => !Number.isNaN(Date.parse(`${value}T00:00:00Z`)) && new Date(`${value}T00:00:00Z`).toISOString().startsWith(value), 'not a calendar day');

export const UsageReportQuery = z
  .object({
    from: utcDay.optional().describe(`First UTC day of the range (YYYY-MM-DD); default: 29 days before \`to\` (30 days)`),
    to: utcDay.optional().describe('Last UTC day of the range, included (YYYY-MM-DD); default: today'),
  })
  .refine((query) => !query.from || !query.to || query.from <= query.to, { message: 'from must not be after to', path: ['from'] })
  .refine((query) => !query.from || !query.to || (Date.parse(query.to) - Date.parse(query.from)) / 86_400_000 + 1 <= MAX_USAGE_REPORT_DAYS, {
    message: `the range is at most ${MAX_USAGE_REPORT_DAYS} days`,
    path: ['to'],
  });

const Totals = {
  requests: z.number().int().nonnegative().describe('Inference calls answered (a failed call counts)'),
  prompt_tokens: z.number().int().nonnegative(),
  completion_tokens: z.number().int().nonnegative(),
  total_tokens: z.number().int().nonnegative(),
  credits: z.number().int().nonnegative().describe('Credits committed (spent)'),
};

export const UsageReportDay = z.object({ day: z.string().describe('UTC day, YYYY-MM-DD'), ...Totals }).meta({ id: 'UsageReportDay' });
export const UsageReportModel = z.object({ model: z.string(), ...Totals }).meta({ id: 'UsageReportModel' });
export const UsageReportKey = z.object({ credential_id: z.string(), name: z.string(), owner: z.string(), ...Totals }).meta({ id: 'UsageReportKey' });

/** Every developer key's use over a range of UTC days: per day, per model and per key. */
export const UsageReport = z
  .object({
    from: z.string(),
    to: z.string(),
    totals: z.object(Totals),
    by_day: z.array(UsageReportDay).describe('Each day of the range that had use, oldest first'),
    by_model: z.array(UsageReportModel).describe(`Models by credits, then calls (at most ${MAX_USAGE_REPORT_ROWS})`),
    models_truncated: z.boolean(),
    by_key: z.array(UsageReportKey).describe(`Keys by credits, then calls (at most ${MAX_USAGE_REPORT_ROWS})`),
    keys_truncated: z.boolean(),
  })
  .meta({ id: 'UsageReport' });
export type UsageReport = z.infer<typeof UsageReport>;
