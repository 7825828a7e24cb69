import { ServiceError } from '../service-error.ts';
import { clientKeyOf, HeldBytes } from './held-bytes.ts';

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
  readonly #held = new HeldBytes();

  constructor(maxBytes: number, perClientBytes: number = Math.floor(maxBytes / 2)) {
    this.maxBytes = maxBytes;
    this.smallBodyReserveBytes = Math.floor(maxBytes / 8);
    this.perClientBytes = Math.min(perClientBytes, maxBytes);
  }

  get heldBytes(): number {
    return this.#held.total;
  }

  /** Takes `bytes` for `clientAddress` or throws 503 `body_budget_full`; the answer gives them back (once). */
  hold(bytes: number, clientAddress: string): () => void {
    if (bytes === 0) return noop;
    const client = clientKeyOf(clientAddress);
    if (this.#held.heldBy(client) + bytes > this.perClientBytes) {
      throw new ServiceError(
        'body_budget_full',
        `This client address is sending as many request bodies at once as one address may (${this.perClientBytes} bytes); retry once one is done.`,
        { retryAfterSeconds: 1, retryable: true },
      );
    }
    const ceiling = bytes <= SMALL_BODY_BYTES ? this.maxBytes : this.maxBytes - this.smallBodyReserveBytes;
    if (this.#held.total + bytes > ceiling) {
      throw new ServiceError('body_budget_full', `The server is reading as many request bodies as it holds at once (${this.maxBytes} bytes); retry shortly.`, {
        retryAfterSeconds: 1,
        retryable: true,
      });
    }
    return this.#held.take(client, bytes);
  }
}

const noop = () => {};

/** A body this small may use the reserve; ordinary JSON requests are far below it. */
export const SMALL_BODY_BYTES = 65_536;
