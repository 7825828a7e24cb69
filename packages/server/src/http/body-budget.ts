import { ServiceError } from '../service-error.ts';

/**
 * The bytes of request bodies the server may hold at once, over every route and surface. A body
 * takes its share before a byte of it is read (its declared length, or the route's cap when it
 * is chunked) and gives it back when its request ends, so callers announcing large bodies and
 * stalling cannot grow memory past the budget: the extra ones are refused at once. The last
 * eighth is kept for bodies of at most 64 KiB, so a full budget still serves ordinary calls.
 */
export class BodyBudget {
  readonly maxBytes: number;
  /** Large bodies stop short of this last share, so stalled uploads never starve ordinary small requests. */
  readonly smallBodyReserveBytes: number;
  #held = 0;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
    this.smallBodyReserveBytes = Math.floor(maxBytes / 8);
  }

  get heldBytes(): number {
    return this.#held;
  }

  /** Takes `bytes` or throws 503 `body_budget_full`; the answer gives them back (once). */
  hold(bytes: number): () => void {
    if (bytes === 0) return noop;
    const ceiling = bytes <= SMALL_BODY_BYTES ? this.maxBytes : this.maxBytes - this.smallBodyReserveBytes;
    if (this.#held + bytes > ceiling) {
      throw new ServiceError('body_budget_full', `The server is reading as many request bodies as it holds at once (${this.maxBytes} bytes); retry shortly.`, {
        retryAfterSeconds: 1,
        retryable: true,
      });
    }
    this.#held += bytes;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.#held -= bytes;
    };
  }
}

const noop = () => {};

/** A body this small may use the reserve; ordinary JSON requests are far below it. */
export const SMALL_BODY_BYTES = 65_536;
