import type { Context } from 'koa';
import { Socket } from 'node:net';
import { ServiceError } from '../service-error.ts';
import { SMALL_BODY_BYTES } from './body-budget.ts';
import { clientKeyOf, HeldBytes } from './held-bytes.ts';

/**
 * The bytes of whole answers the server may hold while their clients have not taken them, over
 * every route and surface: an answer over 64 KiB takes its length when it is written and gives
 * it back once the socket has handed its last byte to the kernel (or closed). 20 clients that each
 * asked for a 12 MB board query and never read it held 419 MiB until the stall deadline (30 s).
 * One client address holds at most `perClientBytes`, so one caller cannot take the budget from
 * the others. Answers of at most 64 KiB are not counted: the connections' count bounds them.
 * Requests pipelined on one connection are answered in one burst while none of their answers has
 * gone out yet: past the share, the later ones of a large size are 503 too.
 */
export class AnswerBudget {
  readonly maxBytes: number;
  readonly perClientBytes: number;
  readonly #held = new HeldBytes();

  constructor(maxBytes: number, perClientBytes: number = Math.floor(maxBytes / 8)) {
    this.maxBytes = maxBytes;
    this.perClientBytes = Math.min(perClientBytes, maxBytes);
  }

  get heldBytes(): number {
    return this.#held.total;
  }

  /** Takes `bytes` for `clientAddress`, or throws 503 `answer_budget_full`; the answer gives them back (once). */
  hold(bytes: number, clientAddress: string): () => void {
    const client = clientKeyOf(clientAddress);
    const clientHeld = this.#held.heldBy(client);
    // A client holding nothing may take one answer of any size, and so may anyone while the server
    // holds nothing: an answer larger than a share (a 12 MB board query) is still served, one at a time.
    const overShare = clientHeld > 0 && clientHeld + bytes > this.perClientBytes;
    const overBudget = this.#held.total > 0 && this.#held.total + bytes > this.maxBytes;
    const whose = overShare ? 'this client address' : overBudget ? 'the server' : undefined;
    if (whose !== undefined) {
      const limit = whose === 'the server' ? this.maxBytes : this.perClientBytes;
      throw new ServiceError(
        'answer_budget_full',
        `${whose === 'the server' ? 'The server holds' : 'This client address holds'} as many bytes of answers not yet read as it may (${limit}); read the answers already sent, then retry.`,
        { retryAfterSeconds: 1, retryable: true },
      );
    }
    return this.#held.take(client, bytes);
  }
}

/** The length of a whole answer Koa is about to write (a string's UTF-16 length, which is its bytes for ASCII JSON), or 0 for none or a stream. */
function wholeAnswerLength(body: unknown): number {
  if (typeof body === 'string') return body.length;
  if (body instanceof Uint8Array) return body.byteLength;
  return 0;
}

/**
 * Counts a large whole answer against the budget before Koa writes it, released when the
 * response finishes (its bytes are all with the kernel) or closes. Over the budget, an answer to
 * a read (GET, HEAD) is refused with 503 `answer_budget_full`, retryable: it is dropped at once
 * rather than held for the stall deadline, and reading again is safe. An answer to any other
 * method is always written (uncounted when over the budget): its work is done (a key made,
 * credits charged), and replacing its answer with a 503 would invite a retry that does it again. An in-process
 * call (dispatch.ts) has no socket to wait on; its caller's answer is counted instead.
 */
export function holdAnswer(ctx: Context, budget: AnswerBudget): void {
  const bytes = wholeAnswerLength(ctx.body);
  if (bytes <= SMALL_BODY_BYTES || !(ctx.req.socket instanceof Socket)) return;
  const { res } = ctx;
  const method = ctx.req.method;
  let release: () => void;
  try {
    release = budget.hold(bytes, ctx.ip);
  } catch (error) {
    if (method === 'GET' || method === 'HEAD') throw error;
    return;
  }
  res.once('finish', release);
  res.once('close', release);
}
