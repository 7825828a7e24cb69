import pg from 'pg';

/** How long a lost listening connection waits before it connects again. */
const RECONNECT_MS = 500;

/**
 * One PostgreSQL channel heard on a connection of its own (`LISTEN`), so a change committed on any
 * replica (a `pg_notify` inside the changing transaction, delivered only if it commits) reaches
 * this one within milliseconds. What a missed notification would leave stale is the caller's to
 * bound: `listening` is false from the moment the connection is lost until it is back and
 * `onReset` has run (a reconnect cannot tell what it missed, so the caller forgets everything).
 */
export class ChannelListener {
  readonly #url: string;
  readonly #channel: string;
  readonly #onNotify: (payload: string) => void;
  readonly #onReset: () => void;
  readonly #onError: (error: unknown) => void;
  #client: pg.Client | undefined;
  #listening = false;
  #closed = false;
  #retry: NodeJS.Timeout | undefined;

  constructor(options: { url: string; channel: string; onNotify: (payload: string) => void; onReset: () => void; onError: (error: unknown) => void }) {
    if (!/^[a-z_][a-z0-9_]*$/.test(options.channel)) throw new Error(`not a channel name: ${options.channel}`);
    this.#url = options.url;
    this.#channel = options.channel;
    this.#onNotify = options.onNotify;
    this.#onReset = options.onReset;
    this.#onError = options.onError;
  }

  /** True while notifications are heard: only then may a cache trust what it holds. */
  get listening(): boolean {
    return this.#listening;
  }

  /** Connects and listens; resolves once listening (or once the first attempt failed: it retries in the background). */
  async start(): Promise<void> {
    await this.#connect();
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#listening = false;
    clearTimeout(this.#retry);
    await this.#client?.end().catch(() => {});
  }

  async #connect(): Promise<void> {
    if (this.#closed) return;
    const client = new pg.Client({ connectionString: this.#url, application_name: 'svc-listen' });
    this.#client = client;
    const lost = (error?: unknown) => {
      if (this.#client !== client) return;
      this.#listening = false;
      this.#client = undefined;
      client.end().catch(() => {});
      if (this.#closed) return;
      if (error) this.#onError(error);
      this.#retry = setTimeout(() => void this.#connect(), RECONNECT_MS).unref();
    };
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', (message) => {
      if (message.channel === this.#channel) this.#onNotify(message.payload ?? '');
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${this.#channel}`);
      if (this.#client !== client) return;
      // Whatever changed while nobody listened is unknown: forget it all before trusting again.
      this.#onReset();
      this.#listening = true;
    } catch (error) {
      lost(error);
    }
  }
}
