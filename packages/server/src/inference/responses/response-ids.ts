import { randomBytes } from 'node:crypto';

/** OpenAI-shaped ids: a kind prefix and 48 hex digits (`resp_…`, `msg_…`, `fc_…`). Random, so any replica may mint them. */
export const newResponseId = (): string => `resp_${randomBytes(24).toString('hex')}`;
export const newItemId = (kind: 'msg' | 'fc' | 'fco' | 'item'): string => `${kind}_${randomBytes(24).toString('hex')}`;
