import { isIP } from 'node:net';
import { ServiceError } from '../service-error.ts';

/**
 * The bytes of request bodies the server may hold at once, over every route and surface. A body
 * takes its share before a byte of it is read (its declared length, or the route's cap when it
 * is chunked) and gives it back when its request ends, so callers announcing large bodies and
 * stalling cannot grow memory past the budget: the extra ones are refused at once. The last
 * eighth is kept for bodies of at most 64 KiB, so a full budget still serves ordinary calls.
 * One client address holds at most `perClientBytes` of it: 230 stalled 1 MiB bodies from one
 * address once filled the whole budget, and every large body from anyone was refused.
 */
export class BodyBudget {
  readonly maxBytes: number;
  /** Large bodies stop short of this last share, so stalled uploads never starve ordinary small requests. */
  readonly smallBodyReserveBytes: number;
  /** The most one client address (an IPv6 /64) may hold at once. */
  readonly perClientBytes: number;
  #held = 0;
  readonly #heldByClient = new Map<string, number>();

  constructor(maxBytes: number, perClientBytes: number = Math.floor(maxBytes / 8)) {
    this.maxBytes = maxBytes;
    this.smallBodyReserveBytes = Math.floor(maxBytes / 8);
    this.perClientBytes = Math.min(perClientBytes, maxBytes);
  }

  get heldBytes(): number {
    return this.#held;
  }

  /** Takes `bytes` for `clientAddress` or throws 503 `body_budget_full`; the answer gives them back (once). */
  hold(bytes: number, clientAddress: string): () => void {
    if (bytes === 0) return noop;
    const client = clientKeyOf(clientAddress);
    const clientHeld = this.#heldByClient.get(client) ?? 0;
    if (clientHeld + bytes > this.perClientBytes) {
      throw new ServiceError(
        'body_budget_full',
        `This client address is sending as many request bodies at once as one address may (${this.perClientBytes} bytes); retry once one is done.`,
        { retryAfterSeconds: 1, retryable: true },
      );
    }
    const ceiling = bytes <= SMALL_BODY_BYTES ? this.maxBytes : this.maxBytes - this.smallBodyReserveBytes;
    if (this.#held + bytes > ceiling) {
      throw new ServiceError('body_budget_full', `The server is reading as many request bodies as it holds at once (${this.maxBytes} bytes); retry shortly.`, {
        retryAfterSeconds: 1,
        retryable: true,
      });
    }
    this.#held += bytes;
    this.#heldByClient.set(client, clientHeld + bytes);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.#held -= bytes;
      const left = (this.#heldByClient.get(client) ?? bytes) - bytes;
      if (left > 0) this.#heldByClient.set(client, left);
      else this.#heldByClient.delete(client);
    };
  }
}

/**
 * The key a client address is counted under: an IPv4 address (an IPv4-mapped IPv6 one as its
 * IPv4), or an IPv6 address's /64, the block one subscriber is given, so a caller cannot take a
 * share per address of its block.
 */
export function clientKeyOf(address: string): string {
  const mapped = address.startsWith('::ffff:') ? address.slice(7) : address;
  if (isIP(mapped) !== 6) return mapped;
  const [head = '', tail] = mapped.toLowerCase().split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? headGroups : [...headGroups, ...Array<string>(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups];
  return `${groups
    .slice(0, 4)
    .map((group) => group.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

const noop = () => {};

/** A body this small may use the reserve; ordinary JSON requests are far below it. */
export const SMALL_BODY_BYTES = 65_536;
