import type { DeveloperCredential } from '@svc/schemas';
import { useEffect, useState } from 'preact/hooks';
import { ErrorNote } from '../../components/error-note.tsx';
import { RelativeTime } from '../../components/relative-time.tsx';
import { useLoad, useTitle } from '../../hooks.ts';
import { BASE } from '../../links.ts';
import { signedInClient } from '../../signed-in.ts';
import { KeyLimitsCell } from '../account/key-limits-editor.tsx';
import { RequireSession } from '../account/require-session.tsx';

const PAGE_SIZE = 50;
/** A search is sent once typing pauses this long, as on the board. */
const SEARCH_PAUSE_MS = 300;

function KeyRow({ credential, onSaved }: { credential: DeveloperCredential; onSaved: () => void }) {
  return (
    <tr>
      <td>{credential.name}</td>
      <td>
        <code>{credential.key_prefix}</code>
      </td>
      <td>
        <code data-testid="key-owner">{credential.owner}</code>
      </td>
      <td>{credential.status}</td>
      <td data-testid="key-expires">{credential.expires_at ? <RelativeTime iso={credential.expires_at} /> : 'never'}</td>
      <td data-testid="key-last-used">{credential.last_used_at ? <RelativeTime iso={credential.last_used_at} /> : 'never'}</td>
      <td data-testid="key-spent">{credential.spent_credits}</td>
      <KeyLimitsCell credential={credential} onSaved={onSaved} />
    </tr>
  );
}

/**
 * Every owner's developer keys for the operator (`GET /v1/developer/credentials?everyone=true`):
 * owner, expiry, last use, credits spent and limits (edited in place), searched on the server by
 * name, id or owner as one types, and paged with "Load more keys".
 */
export function OperatorKeysPage() {
  useTitle('All keys');
  const [typed, setTyped] = useState('');
  const [search, setSearch] = useState('');
  useEffect(() => {
    const timer = setTimeout(() => setSearch(typed.trim()), SEARCH_PAUSE_MS);
    return () => clearTimeout(timer);
  }, [typed]);
  const [loaded, reload] = useLoad(
    async (signal) =>
      (await signedInClient()).developerKeys.list({ query: { everyone: true, limit: PAGE_SIZE, ...(search ? { q: search } : {}) } }, { signal }),
    [search],
  );
  const [more, setMore] = useState<DeveloperCredential[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [failure, setFailure] = useState<unknown>();
  useEffect(() => {
    setMore([]);
    setFailure(undefined);
    setNext(loaded.state === 'done' ? loaded.value.next_cursor : null);
  }, [loaded]);
  const loadMore = async () => {
    if (!next) return;
    setFailure(undefined);
    try {
      const page = await (await signedInClient()).developerKeys.list({
        query: { everyone: true, limit: PAGE_SIZE, cursor: next, ...(search ? { q: search } : {}) },
      });
      setMore((shown) => [...shown, ...page.data.filter((key) => !shown.some((other) => other.credential_id === key.credential_id))]);
      setNext(page.next_cursor);
    } catch (error) {
      setFailure(error);
    }
  };
  const keys = loaded.state === 'done' ? [...loaded.value.data, ...more] : [];
  return (
    <RequireSession operator>
      <h1>All keys</h1>
      <p class="meta">
        Every owner's developer keys, newest first. <a href={`${BASE}operator`}>Operator overview</a> · <a href={`${BASE}operator/usage`}>Usage</a>
      </p>
      <label class="search">
        Search by name, key id or owner
        <input type="search" value={typed} onInput={(event) => setTyped(event.currentTarget.value)} maxLength={100} />
      </label>
      {loaded.state === 'loading' && <p>Loading keys…</p>}
      {loaded.state === 'failed' && <ErrorNote error={loaded.error} />}
      {loaded.state === 'done' && keys.length === 0 && (
        <p data-testid="no-keys">
          {search ? `No key's name, id or owner holds “${search}”.` : 'No developer keys yet: an agent signs in and creates one on its Keys page.'}
        </p>
      )}
      {keys.length > 0 && (
        <div class="table-wrap">
          <table data-testid="operator-keys">
            <caption class="meta">
              {keys.length} key{keys.length === 1 ? '' : 's'} shown{next ? ', more below' : ''}
            </caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col">Owner</th>
                <th scope="col">Status</th>
                <th scope="col">Expires</th>
                <th scope="col">Last used</th>
                <th scope="col">Credits spent</th>
                <th scope="col">Limits</th>
              </tr>
            </thead>
            <tbody>
              {keys.map((credential) => (
                <KeyRow key={credential.credential_id} credential={credential} onSaved={reload} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {next && (
        <button type="button" onClick={loadMore}>
          Load more keys
        </button>
      )}
      {failure !== undefined && <ErrorNote error={failure} />}
    </RequireSession>
  );
}
