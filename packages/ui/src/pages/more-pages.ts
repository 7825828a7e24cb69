import { useEffect, useState } from 'preact/hooks';

export type HistoryCursor = { before: string; before_id: string };
export interface Page<T> {
  items: T[];
  next: HistoryCursor | null;
}

/**
 * A list read page by page through its `history_next` cursor: the first page as loaded, then
 * each "Load more" appends the next one. An item already shown (by `idOf`) is not added again, so
 * a list that moved between two reads never shows a row twice. Starts over when `first` changes.
 */
export function useMorePages<T>(first: Page<T> | undefined, readPage: (cursor: HistoryCursor) => Promise<Page<T>>, idOf: (item: T) => string) {
  const [items, setItems] = useState<T[]>(first?.items ?? []);
  const [next, setNext] = useState<HistoryCursor | null>(first?.next ?? null);
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<unknown>();
  useEffect(() => {
    setItems(first?.items ?? []);
    setNext(first?.next ?? null);
    setFailure(undefined);
  }, [first]);
  const loadMore = async () => {
    if (!next || busy) return;
    setBusy(true);
    setFailure(undefined);
    try {
      const page = await readPage(next);
      setItems((current) => {
        const shown = new Set(current.map(idOf));
        return [...current, ...page.items.filter((item) => !shown.has(idOf(item)))];
      });
      setNext(page.next);
    } catch (error) {
      setFailure(error);
    } finally {
      setBusy(false);
    }
  };
  return { items, next, busy, failure, loadMore };
}
