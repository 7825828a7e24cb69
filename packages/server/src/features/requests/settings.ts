import { z } from 'zod';

const count = (fallback: number) => z.coerce.number().int().min(0).max(1_000_000).default(fallback);

/**
 * Per-principal submission limits of catalog requests (the spec leaves them open). Only new
 * requests count; replays never do. 0 refuses every new request (a way to pause filing).
 */
export const requestsEnvShape = {
  SVC_REQUESTS_PER_HOUR: count(20),
  SVC_REQUESTS_PER_DAY: count(100),
};

export interface RequestsSettings {
  perHour: number;
  perDay: number;
}

export function requestsSettingsFrom(env: { SVC_REQUESTS_PER_HOUR: number; SVC_REQUESTS_PER_DAY: number }): RequestsSettings {
  return { perHour: env.SVC_REQUESTS_PER_HOUR, perDay: env.SVC_REQUESTS_PER_DAY };
}
