import { useEffect, useState } from 'preact/hooks';

export type Loaded<T> = { state: 'loading' } | { state: 'done'; value: T } | { state: 'failed'; error: unknown };

/**
 * Runs `load` when a dependency changes and keeps its outcome; an answer that arrives after the
 * inputs changed again is dropped (its signal is aborted), so a slow search never overwrites a newer one.
 */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, dependencies: unknown[]): [Loaded<T>, () => void] {
  const [outcome, setOutcome] = useState<Loaded<T>>({ state: 'loading' });
  const [round, setRound] = useState(0);
  useEffect(() => {
    const controller = new AbortController();
    setOutcome({ state: 'loading' });
    load(controller.signal).then(
      (value) => controller.signal.aborted || setOutcome({ state: 'done', value }),
      (error: unknown) => controller.signal.aborted || setOutcome({ state: 'failed', error }),
    );
    return () => controller.abort();
  }, [...dependencies, round]);
  return [outcome, () => setRound((value) => value + 1)];
}

/** Sets the document title, so each page is announced by name to screen readers and in history. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · svc console`;
  }, [title]);
}
