import { randomBytes } from 'node:crypto';

const ACCEPTABLE = /^[A-Za-z0-9._:-]{1,128}$/;

/** Echoes a caller's request id when it is a safe token; otherwise makes one. */
export function requestIdFrom(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return value && ACCEPTABLE.test(value) ? value : `req_${randomBytes(12).toString('hex')}`;
}
