import { z } from 'zod';

/**
 * Query strings carry text; these parse it while keeping a typed input for the client.
 * Booleans accept 1/0/true/false, so both `?semantic=1` and `?all_requests=true` read naturally.
 */
export const queryBoolean = () => z.union([z.boolean(), z.enum(['1', '0', 'true', 'false']).transform((value) => value === '1' || value === 'true')]);

export const queryInt = (min: number, max: number) =>
  z
    .union([
      z.number(),
      z
        .string()
        .regex(/^-?\d+$/, 'Expected an integer')
        .transform(Number),
    ])
    .pipe(z.number().int().min(min).max(max));

/** A page size with the spec's bounds and default. */
export const pageLimit = (max: number, fallback: number) => queryInt(1, max).default(fallback);
