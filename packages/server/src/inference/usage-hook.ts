import type { InferenceUsage } from '@svc/schemas';

/** One finished inference call: what billing, jobs and metrics read. */
export interface UsageEvent {
  /** The operation of the API (`chat`, `embeddings`, `rerank`, ...). */
  operation: string;
  engine: string;
  model: string;
  usage: InferenceUsage;
  latencyMs: number;
  /** The principal that made the call, and the request it came in on. */
  principalId: string;
  /** The developer key the call came in with, if any: usage per key counts by it. */
  developerKeyId?: string;
  requestId: string;
  /** False when the call failed; usage then holds what was consumed before the failure. */
  ok: boolean;
  /** The stable error code of a failed call. */
  errorCode?: string;
  /** `hit`: answered from the response cache, so no engine ran and `usage` is zero. */
  cache?: 'hit';
}

export type UsageListener = (event: UsageEvent) => void;

/**
 * The one place every inference call reports what it used. Features subscribe (metrics counts
 * per operation and model; billing and jobs read the events) rather than reaching into engines.
 * A listener that throws is logged by the caller and never fails the call it reports.
 */
export class UsageHook {
  private readonly listeners = new Set<UsageListener>();
  private readonly onListenerError: (error: unknown) => void;

  constructor(onListenerError: (error: unknown) => void) {
    this.onListenerError = onListenerError;
  }

  subscribe(listener: UsageListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  report(event: UsageEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.onListenerError(error);
      }
    }
  }
}
