/**
 * Phases of a request for the `Server-Timing` header. A handler either records a measured
 * duration (`record`) or wraps work (`measure`); the adapter writes the header.
 */
export class ServerTiming {
  private readonly phases = new Map<string, number>();

  record(name: string, milliseconds: number): void {
    this.phases.set(name, (this.phases.get(name) ?? 0) + milliseconds);
  }

  async measure<T>(name: string, work: () => Promise<T> | T): Promise<T> {
    const started = performance.now();
    try {
      return await work();
    } finally {
      this.record(name, performance.now() - started);
    }
  }

  /** The milliseconds recorded under `name` so far, if any. */
  get(name: string): number | undefined {
    return this.phases.get(name);
  }

  get size(): number {
    return this.phases.size;
  }

  header(): string {
    return [...this.phases].map(([name, ms]) => `${name};dur=${ms.toFixed(1)}`).join(', ');
  }
}
