import { z } from 'zod';

/**
 * The kinds of value an environment variable holds, shared by config.ts and every feature's
 * `<f>-config.ts`. Each message says what was expected, because start-up prints it after the
 * variable's name (`SVC_PDF_WORKERS="0": expected a worker count from 1 to 64`).
 */

/** The environment as start-up reads it: unset and empty variables are both absent. */
export type EnvVariables = Record<string, string | undefined>;

/** An integer within bounds; the message says what was expected rather than "received NaN". */
export const integer = (min: number, max: number, what = 'an integer') => {
  const expected = `expected ${what} from ${min} to ${max}`;
  return z.coerce.number({ error: expected }).int({ error: expected }).min(min, { error: expected }).max(max, { error: expected });
};

export const port = integer(0, 65535, 'a port number');

/** `true`/`1` or `false`/`0`; anything else is refused rather than read as false. */
export const flag = z.enum(['true', 'false', '1', '0']).transform((value) => value === 'true' || value === '1');

export const httpUrl = z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' });

/** A token, key or secret, refused when shorter than `characters`. */
export const secret = (characters: number) => z.string().min(characters, `must be at least ${characters} characters`);

/** A public URL without its trailing slashes, so paths join onto it with one. */
export const withoutTrailingSlash = (url: string) => url.replace(/(?<!\/)\/+$/, '');
