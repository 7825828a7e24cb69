import { randomFillSync } from 'node:crypto';

/** Bytes of randomness in one id (48 hex digits, as OpenAI's). */
const ID_BYTES = 24;
/**
 * Random bytes for this many ids, drawn from the CSPRNG at once: `randomBytes(24)` costs some 6 µs
 * a call (a job through the crypto binding each time), and a translated stream mints three ids
 * before its first token (response, input message, output message). Node's `randomUUID` keeps a
 * cache the same way.
 */
const POOLED_IDS = 128;
const pool = Buffer.allocUnsafeSlow(ID_BYTES * POOLED_IDS);
let offset = pool.length;

/** 48 hex digits no other id shares: each pooled byte is handed out once. */
function randomHex(): string {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const hex = pool.toString('hex', offset, offset + ID_BYTES);
  offset += ID_BYTES;
  return hex;
}

/** OpenAI-shaped ids: a kind prefix and 48 hex digits (`resp_…`, `msg_…`, `fc_…`). Random, so any replica may mint them. */
export const newResponseId = (): string => `resp_${randomHex()}`;
export const newItemId = (kind: 'msg' | 'fc' | 'fco' | 'item'): string => `${kind}_${randomHex()}`;
