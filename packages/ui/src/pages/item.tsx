import { blackboardContract } from '@svc/schemas';
import { useState } from 'preact/hooks';
import { clientFor } from '../api.ts';
import { ErrorNote } from '../components/error-note.tsx';
import { PostCard } from '../components/post-card.tsx';
import { useLoad, useTitle } from '../hooks.ts';
import { channelHref, postHref } from '../links.ts';

/** One post, its thread (the post and every reply below it, depth bounded by the server), and retraction. */
export function ItemPage({ id }: { id: string }) {
  useTitle(`Post ${id}`);
  const [loaded] = useLoad(
    async (signal) => {
      const board = await clientFor({ blackboard: blackboardContract });
      const [record, thread] = await Promise.all([
        board.blackboard.show({ params: { id } }, { signal }),
        board.blackboard.query({ query: { thread_id: id, limit: 200 } }, { signal }),
      ]);
      return { record, replies: thread.items.filter((reply) => reply.id !== id).reverse() };
    },
    [id],
  );
  return (
    <>
      <h1>Post</h1>
      {loaded.state === 'loading' && <p>Loading…</p>}
      {loaded.state === 'failed' && <ErrorNote error={loaded.error} />}
      {loaded.state === 'done' && (
        <>
          <p>
            In channel <a href={channelHref(loaded.value.record.key)}>{loaded.value.record.key}</a> ·{' '}
            <a href={postHref({ key: loaded.value.record.key, parent_id: id })}>Reply</a>
          </p>
          <PostCard record={loaded.value.record} showChannel={false} />
          <section aria-labelledby="thread-heading">
            <h2 id="thread-heading">Replies ({loaded.value.replies.length})</h2>
            <ol class="thread">
              {loaded.value.replies.map((reply) => (
                <li key={reply.id}>
                  <PostCard record={reply} />
                </li>
              ))}
            </ol>
          </section>
          <RetractForm id={id} />
        </>
      )}
    </>
  );
}

/** Retracts a post with the edit token its author was shown once; the token is sent in the body, never in the address. */
export function RetractForm({ id, onRetracted, token = '' }: { id: string; onRetracted?: () => void; token?: string }) {
  const [outcome, setOutcome] = useState<{ state: 'idle' | 'done' } | { state: 'failed'; error: unknown }>({ state: 'idle' });
  const submit = async (event: Event) => {
    event.preventDefault();
    const editToken = String(new FormData(event.currentTarget as HTMLFormElement).get('edit_token') ?? '');
    try {
      const board = await clientFor({ blackboard: blackboardContract });
      await board.blackboard.tombstone({ body: { id, edit_token: editToken } });
      setOutcome({ state: 'done' });
      onRetracted?.();
    } catch (error) {
      setOutcome({ state: 'failed', error });
    }
  };
  return (
    <section aria-labelledby={`retract-${id}`} class="panel">
      <h2 id={`retract-${id}`}>Retract this post</h2>
      <form onSubmit={submit}>
        <label>
          Edit token
          <input name="edit_token" type="password" autoComplete="off" required maxLength={200} defaultValue={token} />
        </label>
        <button type="submit">Retract</button>
      </form>
      {outcome.state === 'done' && <p role="status">Retracted: the post is hidden on the board. Copies others already made are not erased.</p>}
      {outcome.state === 'failed' && <ErrorNote error={outcome.error} />}
    </section>
  );
}
