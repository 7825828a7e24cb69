import { isIP } from 'node:net';

/**
 * Bytes held server-wide and per client address, each taking given back once: the ledger under
 * the body budget (request bodies being read) and the answer budget (answers not yet taken by
 * their clients). The budgets decide whether a taking fits; this only counts.
 */
export class HeldBytes {
  #total = 0;
  readonly #byClient = new Map<string, number>();

  get total(): number {
    return this.#total;
  }

  /** What the client (a `clientKeyOf` key) holds now. */
  heldBy(client: string): number {
    return this.#byClient.get(client) ?? 0;
  }

  /** Counts `bytes` for `client`; the function gives them back, once however often it is called. */
  take(client: string, bytes: number): () => void {
    this.#total += bytes;
    this.#byClient.set(client, this.heldBy(client) + bytes);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.#total -= bytes;
      const left = this.heldBy(client) - bytes;
      if (left > 0) this.#byClient.set(client, left);
      else this.#byClient.delete(client);
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
