import { randomBytes } from 'node:crypto';

const ACCEPTABLE = /^[A-Za-z0-9._:-]{1,128}$/;

// A random per-process prefix and a counter: unique across replicas without a syscall per request.
const processPrefix = randomBytes(8).toString('hex');
let counter = 0;

/** Echoes a caller's request id when it is a safe token; otherwise makes one. */
export function requestIdFrom(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  if (value && ACCEPTABLE.test(value)) return value;
  counter = (counter + 1) % 0xffffffff;
  return `req_${processPrefix}${counter.toString(16).padStart(8, '0')}`;
}
