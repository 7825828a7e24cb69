import { createHash, randomInt } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { DEVELOPER_KEY_PATTERN } from '@svc/schemas';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function randomBase62(length: number): string {
  let out = '';
  for (let index = 0; index < length; index++) out += BASE62[randomInt(62)];
  return out;
}

function base62(value: number, width: number): string {
  let out = '';
  let rest = value;
  while (rest > 0) {
    out = BASE62[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out.padStart(width, '0');
}

/** CRC32 of everything before it, base62 in 6 characters: lets scanners reject look-alikes offline. */
const checksum = (body: string) => base62(crc32(body), 6);

export interface NewDeveloperKey {
  credentialId: string;
  key: string;
  hash: string;
}

/**
 * A developer key: `svc_dk_<22 id>_<32 secret><6 checksum>`, 190 bits of secret. The id half is
 * public (it is the credential id after `dk_`); only the SHA-256 of the whole key is stored.
 */
export function newDeveloperKey(): NewDeveloperKey {
  const idPart = randomBase62(22);
  const body = `svc_dk_${idPart}_${randomBase62(32)}`;
  const key = `${body}${checksum(body)}`;
  return { credentialId: `dk_${idPart}`, key, hash: hashDeveloperKey(key) };
}

export const hashDeveloperKey = (key: string) => createHash('sha256').update(key).digest('hex');

export const keyPrefixOf = (credentialId: string) => `svc_dk_${credentialId.slice(3)}_`;

export const looksLikeDeveloperKey = (token: string) => token.startsWith('svc_dk_');

/** The credential id of a well-formed key with a good checksum; undefined otherwise. */
export function parseDeveloperKey(token: string): { credentialId: string } | undefined {
  const match = DEVELOPER_KEY_PATTERN.exec(token);
  if (!match) return undefined;
  const body = token.slice(0, -6);
  if (checksum(body) !== match[3]) return undefined;
  return { credentialId: `dk_${match[1]}` };
}
