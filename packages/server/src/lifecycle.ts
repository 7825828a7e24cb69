/**
 * Where the server is in its life, shared by the HTTP layer and the readiness route: once a
 * drain begins, `/readyz` fails at once (a load balancer stops sending), answers ask their
 * clients to close the connection, and open event streams end with a final event.
 */
export class ServerLifecycle {
  #draining = false;
  readonly #shutdown = new AbortController();

  get draining(): boolean {
    return this.#draining;
  }

  /** Aborts when the drain begins; event streams listen to it. */
  get shutdownSignal(): AbortSignal {
    return this.#shutdown.signal;
  }

  beginDrain(): void {
    if (this.#draining) return;
    this.#draining = true;
    this.#shutdown.abort();
  }
}
