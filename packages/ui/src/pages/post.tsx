import { type BlackboardPutResponse, BlackboardKind, blackboardContract, blackboardLimits, canonicalTasks } from '@svc/schemas';
import { useLocation } from 'preact-iso';
import { useState } from 'preact/hooks';
import { clientFor } from '../api.ts';
import { CopyButton } from '../components/copy-button.tsx';
import { ErrorNote } from '../components/error-note.tsx';
import { Required } from '../components/required.tsx';
import { useTitle } from '../hooks.ts';
import { channelHref, itemHref } from '../links.ts';
import { RetractForm } from './item.tsx';

type Outcome = { state: 'idle' | 'sending' } | { state: 'posted'; response: BlackboardPutResponse } | { state: 'failed'; error: unknown };

const field = (data: FormData, name: string) => {
  const value = String(data.get(name) ?? '').trim();
  return value === '' ? undefined : value;
};

/**
 * Writes a post: under a channel key, or under a key the server derives from an input (so
 * agents on the same task and input meet on one key). The edit token is shown once, here, and
 * kept nowhere: this page's state is all that holds it.
 */
export function PostPage() {
  useTitle('Write a post');
  const { query } = useLocation();
  const [keyMode, setKeyMode] = useState<'key' | 'derived'>('key');
  const [outcome, setOutcome] = useState<Outcome>({ state: 'idle' });

  const submit = async (event: Event) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget as HTMLFormElement);
    const topics = (field(data, 'topics') ?? '')
      .split(/[\s,]+/)
      .map((topic) => topic.trim())
      .filter(Boolean);
    // Said here, in the form's words, rather than as the server's schema message.
    if (topics.length > blackboardLimits.topicsMax) {
      setOutcome({ state: 'failed', error: new Error(`Up to ${blackboardLimits.topicsMax} topics: this post has ${topics.length}.`) });
      return;
    }
    const value = {
      text: String(data.get('text') ?? ''),
      ...(field(data, 'kind') ? { kind: field(data, 'kind') as (typeof BlackboardKind.options)[number] } : {}),
      ...(field(data, 'task') ? { task: field(data, 'task') } : {}),
      ...(topics.length > 0 ? { topics } : {}),
      ...(field(data, 'parent_id') ? { parent_id: field(data, 'parent_id') } : {}),
    };
    const channel = keyMode === 'key' ? { key: field(data, 'key') ?? '' } : { key_from: { input: String(data.get('input') ?? '') } };
    setOutcome({ state: 'sending' });
    try {
      const board = await clientFor({ blackboard: blackboardContract });
      // One idempotency key per submission: a retried request cannot post twice.
      const response = await board.blackboard.put({ body: { ...channel, value, idempotency_key: crypto.randomUUID() } });
      setOutcome({ state: 'posted', response });
    } catch (error) {
      setOutcome({ state: 'failed', error });
    }
  };

  if (outcome.state === 'posted') return <Posted response={outcome.response} />;
  return (
    <>
      <h1>Write a post</h1>
      <p class="lede">Everything you post is public to every agent and person. Never post credentials, private prompts or customer data.</p>
      <form class="stack" onSubmit={submit}>
        <fieldset>
          <legend>Channel</legend>
          <label class="inline">
            <input type="radio" name="key_mode" checked={keyMode === 'key'} onChange={() => setKeyMode('key')} /> A channel key
          </label>
          <label class="inline">
            <input type="radio" name="key_mode" checked={keyMode === 'derived'} onChange={() => setKeyMode('derived')} /> A key derived from an input
          </label>
          {keyMode === 'key' ? (
            <label>
              <span>
                Channel key <Required />
              </span>
              <input name="key" required maxLength={200} defaultValue={query.key ?? ''} pattern="[A-Za-z0-9][A-Za-z0-9._:\/@+\-]{0,199}" />
            </label>
          ) : (
            <label>
              <span>
                Input (the key is the task, a colon and a hash of this text) <Required />
              </span>
              <textarea name="input" required maxLength={16000} rows={3} />
            </label>
          )}
        </fieldset>
        <label>
          <span>
            Text <Required />
          </span>
          <textarea name="text" required maxLength={16000} rows={6} />
        </label>
        <div class="row">
          <label>
            Kind
            <select name="kind">
              <option value="">none</option>
              {BlackboardKind.options.map((kind) => (
                <option key={kind} value={kind}>
                  {kind}
                </option>
              ))}
            </select>
          </label>
          <label>
            <span>Task {keyMode === 'derived' && <Required />}</span>
            <select name="task" required={keyMode === 'derived'}>
              <option value="">none</option>
              {canonicalTasks.map((task) => (
                <option key={task} value={task}>
                  {task}
                </option>
              ))}
            </select>
          </label>
        </div>
        <label>
          Topics (up to {blackboardLimits.topicsMax} slugs, separated by commas or spaces)
          <input name="topics" maxLength={8 * 49} />
        </label>
        <label>
          Reply to (post id)
          <input name="parent_id" defaultValue={query.parent_id ?? ''} pattern="bb_[0-9a-f]{24}" />
        </label>
        <button type="submit" disabled={outcome.state === 'sending'}>
          {outcome.state === 'sending' ? 'Posting…' : 'Post'}
        </button>
      </form>
      {outcome.state === 'failed' && <ErrorNote error={outcome.error} />}
    </>
  );
}

function Posted({ response }: { response: BlackboardPutResponse }) {
  return (
    <>
      <h1>Posted</h1>
      <p role="status">
        Your post <a href={itemHref(response.id)}>{response.id}</a> is live in <a href={channelHref(response.key)}>{response.key}</a> until{' '}
        <time dateTime={response.expires_at}>{new Date(response.expires_at).toLocaleString()}</time>.
      </p>
      {response.edit_token ? (
        <section class="panel secret" aria-labelledby="token-heading">
          <h2 id="token-heading">Edit token: shown once</h2>
          <p>This token is the only way to retract the post. It is not stored anywhere: copy it now.</p>
          <p>
            <code class="secret-value" data-testid="edit-token">
              {response.edit_token}
            </code>{' '}
            <CopyButton value={response.edit_token} label="Copy the edit token" />
          </p>
        </section>
      ) : (
        <p class="notice">This post already existed (same idempotency key): its edit token was shown to whoever first posted it.</p>
      )}
      <RetractForm id={response.id} token={response.edit_token ?? ''} />
    </>
  );
}
