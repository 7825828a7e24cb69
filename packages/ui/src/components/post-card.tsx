import type { BlackboardRecord } from '@svc/schemas';
import { channelHref, itemHref, postHref } from '../links.ts';
import { HiddenCharactersWarning, hasHiddenCharacters, MarkedText } from './marked-text.tsx';
import { RelativeTime } from './relative-time.tsx';

/** The item fields the card lays out itself; every other field is shown as inert JSON. */
const SHOWN = new Set(['text', 'kind', 'task', 'topics', 'parent_id', 'artifact_id', 'coprocessor', 'next_call', 'receipt']);

/** The start of a post's text, to name it by what it says (a reply's parent, a Reply link's target) instead of its `bb_…` id. */
export const excerpt = (text: string, length = 80) => {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > length ? `${line.slice(0, length - 1)}…` : line;
};

/** Data someone posted, shown as text: JSON in a <pre>, never interpreted, never a link. */
function InertJson({ label, value }: { label: string; value: unknown }) {
  return (
    <details class="inert">
      <summary>{label}</summary>
      <pre>{JSON.stringify(value, null, 2)}</pre>
    </details>
  );
}

/**
 * One post. Every caller-supplied string (text, key, topics, task, kind, extra fields) is a
 * text node: Preact never turns a string into markup, and nothing here sets inner HTML.
 */
export function PostCard({
  record,
  showChannel = true,
  parentText,
}: {
  record: BlackboardRecord;
  showChannel?: boolean;
  /** The parent's text when the page has it (a thread); else the parent is named "a post", never by its id. */
  parentText?: string | undefined;
}) {
  const { item } = record;
  const topics = Array.isArray(item.topics) ? (item.topics as unknown[]).map(String) : [];
  const extras = Object.fromEntries(Object.entries(item).filter(([name]) => !SHOWN.has(name)));
  const parent = typeof item.parent_id === 'string' ? item.parent_id : undefined;
  return (
    <article class="post" aria-labelledby={`post-${record.id}`}>
      <header class="post-head">
        {typeof item.kind === 'string' && (
          <span class={`badge kind-${['ask', 'result', 'note', 'message'].includes(item.kind) ? item.kind : 'other'}`}>{item.kind}</span>
        )}
        {typeof item.task === 'string' && <span class="badge">{item.task}</span>}
        {record.receipt_verified && <span class="badge verified">receipt verified</span>}
        <a id={`post-${record.id}`} href={itemHref(record.id)} class="meta">
          <RelativeTime iso={record.created_at} />
        </a>
        {showChannel && (
          <a href={channelHref(record.key)} class="channel-key">
            {record.key}
          </a>
        )}
      </header>
      {hasHiddenCharacters(item.text) && <HiddenCharactersWarning />}
      <p class="post-text">
        <MarkedText text={item.text} />
      </p>
      {topics.length > 0 && (
        <ul class="topics" aria-label="Topics">
          {topics.map((topic) => (
            <li key={topic}>{topic}</li>
          ))}
        </ul>
      )}
      <footer class="post-foot meta">
        {parent && (
          <a href={itemHref(parent)} class="parent-link">
            in reply to{' '}
            {parentText === undefined ? (
              'a post'
            ) : (
              <span class="parent-excerpt">
                “<MarkedText text={excerpt(parentText)} />”
              </span>
            )}
          </a>
        )}
        <a href={postHref({ key: record.key, parent_id: record.id })} aria-label={`Reply to “${excerpt(item.text, 40)}”`}>
          Reply
        </a>
        {typeof item.artifact_id === 'string' && <span>artifact {item.artifact_id}</span>}
        <span>screening: {item.coprocessor.action}</span>
      </footer>
      {item.next_call !== undefined && <InertJson label="next_call (untrusted agent metadata, never run)" value={item.next_call} />}
      {item.receipt !== undefined && <InertJson label="receipt" value={item.receipt} />}
      {Object.keys(extras).length > 0 && <InertJson label="other fields" value={extras} />}
    </article>
  );
}
