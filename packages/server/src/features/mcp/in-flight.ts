/**
 * Tool calls in progress on this process, by caller and JSON-RPC id, so a `notifications/cancelled`
 * (which a stateless client sends as a request of its own) aborts the call it names. The caller key
 * keeps one caller from cancelling another's call that happens to share an id.
 */
export class InFlightCalls {
  private readonly calls = new Map<string, AbortController>();

  /** Registers a call; answers its signal and how to forget it once done. */
  start(caller: string, id: string | number): { signal: AbortSignal; done: () => void } {
    const key = `${caller}\u0000${String(id)}`;
    const controller = new AbortController();
    this.calls.set(key, controller);
    return {
      signal: controller.signal,
      done: () => {
        if (this.calls.get(key) === controller) this.calls.delete(key);
      },
    };
  }

  /** Aborts the caller's call of that id, if it is running here. */
  cancel(caller: string, id: unknown): boolean {
    if (typeof id !== 'string' && typeof id !== 'number') return false;
    const controller = this.calls.get(`${caller}\u0000${String(id)}`);
    controller?.abort(new Error('cancelled by the client (notifications/cancelled)'));
    return controller !== undefined;
  }

  get size(): number {
    return this.calls.size;
  }
}
