import { BlackboardKind, canonicalTasks } from '@svc/schemas';
import { useLocation } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { withQuery } from '../links.ts';

type BoardKind = (typeof BlackboardKind.options)[number];
const isKind = (value: string | undefined): value is BoardKind => (BlackboardKind.options as readonly string[]).includes(value ?? '');

export interface BoardFilters {
  task?: string | undefined;
  kind?: BoardKind | undefined;
  topic?: string | undefined;
  q?: string | undefined;
}

/** The filters the board's address holds: a filtered board can be bookmarked and shared. */
export function filtersFrom(query: Record<string, string>): BoardFilters {
  const pick = (name: string) => (query[name] ? query[name] : undefined);
  const kind = pick('kind');
  return { task: pick('task'), kind: isKind(kind) ? kind : undefined, topic: pick('topic'), q: pick('q') };
}

/** Drops empty values: the contract treats them as absent, and the address stays short. */
export const definedFilters = (filters: BoardFilters) => Object.fromEntries(Object.entries(filters).filter(([, value]) => value)) as BoardFilters;

/** How long typing must pause before the board searches: one request per pause, not per key. */
export const SEARCH_DEBOUNCE_MS = 300;

/**
 * The channel filters of the spec (task, kind, topic, q), submitted into the address. The text
 * searches as you type: after a pause of SEARCH_DEBOUNCE_MS the address takes the new text
 * (replacing the history entry, so Back leaves the board rather than undoing letters), and the
 * board's load for the older text is aborted (useLoad), so a slow answer never overwrites a newer one.
 */
export function BoardFilterForm({ path, filters }: { path: string; filters: BoardFilters }) {
  const { route } = useLocation();
  const [text, setText] = useState(filters.q ?? '');
  // The address changed from elsewhere (a link, Back): the box shows its text.
  useEffect(() => {
    setText((current) => (current.trim() === (filters.q ?? '') ? current : (filters.q ?? '')));
  }, [filters.q]);
  useEffect(() => {
    const wanted = text.trim();
    if (wanted === (filters.q ?? '')) return;
    const timer = setTimeout(() => route(withQuery(path, { ...filters, q: wanted }), true), SEARCH_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [text]);
  const submit = (event: Event) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget as HTMLFormElement);
    route(withQuery(path, Object.fromEntries([...data.entries()].map(([name, value]) => [name, String(value).trim()]))));
  };
  // Keyed by the filters but the text, so the form is rebuilt when they change and the box keeps focus while typing.
  const { q: _text, ...others } = filters;
  return (
    <form class="filters" key={JSON.stringify(others)} onSubmit={submit} aria-label="Filter the board">
      <label>
        Task
        <select name="task" defaultValue={filters.task ?? ''}>
          <option value="">any</option>
          {canonicalTasks.map((task) => (
            <option key={task} value={task}>
              {task}
            </option>
          ))}
        </select>
      </label>
      <label>
        Kind
        <select name="kind" defaultValue={filters.kind ?? ''}>
          <option value="">any</option>
          {BlackboardKind.options.map((kind) => (
            <option key={kind} value={kind}>
              {kind}
            </option>
          ))}
        </select>
      </label>
      <label>
        Topic
        <input name="topic" defaultValue={filters.topic ?? ''} maxLength={48} pattern="[a-z0-9]+(-[a-z0-9]+)*" placeholder="e.g. offers-rerank" />
      </label>
      <label>
        Text
        <input name="q" type="search" value={text} onInput={(event) => setText(event.currentTarget.value)} maxLength={200} />
      </label>
      <button type="submit">Apply</button>
    </form>
  );
}
