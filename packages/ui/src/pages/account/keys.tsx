import type { DeveloperCredential, DeveloperCredentialSecretResponse } from '@svc/schemas';
import { keyLimitMaximums, keyLimitNames, scopes } from '@svc/schemas';
import { useEffect, useRef, useState } from 'preact/hooks';
import { CopyButton } from '../../components/copy-button.tsx';
import { ErrorNote } from '../../components/error-note.tsx';
import { Required } from '../../components/required.tsx';
import { useLoad, useTitle } from '../../hooks.ts';
import { signedInClient } from '../../signed-in.ts';
import { KeyLimitsCell } from './key-limits-editor.tsx';
import { RequireSession } from './require-session.tsx';

/**
 * The secret of a key just created or rotated: shown once, here, kept nowhere else. It is brought
 * into view and focused when it appears, since the button that made it may be far down the page
 * (a row of the table) or the page may be a phone's height: a secret out of sight is easily lost.
 */
function SecretOnce({ issued }: { issued: DeveloperCredentialSecretResponse }) {
  const panel = useRef<HTMLElement>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    panel.current?.scrollIntoView({ block: 'start' });
    heading.current?.focus({ preventScroll: true });
  }, [issued.secret]);
  return (
    <section ref={panel} class="panel secret" aria-labelledby="secret-heading" role="status">
      <h2 id="secret-heading" ref={heading} tabIndex={-1}>
        Key {issued.credential.name}: secret shown once
      </h2>
      <p>Store it now: the server keeps only its hash, and this page forgets it when you leave.</p>
      <p>
        <code class="secret-value" data-testid="key-secret">
          {issued.secret}
        </code>{' '}
        <CopyButton value={issued.secret} label="Copy the key" />
      </p>
    </section>
  );
}

function Receipts({ credentialId }: { credentialId: string }) {
  const [loaded] = useLoad(
    async (signal) => (await signedInClient()).developerKeys.receipts({ params: { credential_id: credentialId } }, { signal }),
    [credentialId],
  );
  if (loaded.state === 'loading') return <p>Loading receipts…</p>;
  if (loaded.state === 'failed') return <ErrorNote error={loaded.error} />;
  return (
    <ol class="receipts">
      {loaded.value.data.map((receipt) => (
        <li key={receipt.receipt_id}>
          <time dateTime={receipt.occurred_at}>{new Date(receipt.occurred_at).toLocaleString()}</time> {receipt.event} by {receipt.actor}
          {receipt.related_credential_id && <> (related {receipt.related_credential_id})</>}
          <details class="inert">
            <summary>Signed receipt</summary>
            <pre>{receipt.signed_receipt}</pre>
          </details>
        </li>
      ))}
    </ol>
  );
}

/** What each action does to the key, said before it is done: both stop the current secret at once. */
const CONSEQUENCE = {
  rotate: 'A new secret replaces this one, and calls with the current secret stop at once.',
  revoke: 'The key stops working at once, for good.',
} as const;

function KeyRow({ credential, onChange }: { credential: DeveloperCredential; onChange: (issued?: DeveloperCredentialSecretResponse) => void }) {
  const [failure, setFailure] = useState<unknown>();
  const [showReceipts, setShowReceipts] = useState(false);
  // Rotate and Revoke break whatever uses the key: each asks once more, in the row, before it runs.
  const [confirming, setConfirming] = useState<'rotate' | 'revoke' | undefined>();
  // The button pressed is gone; focus goes to the safe answer, so a second Enter does not confirm.
  const cancel = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (confirming) cancel.current?.focus();
  }, [confirming]);
  const act = async (action: 'rotate' | 'revoke') => {
    setConfirming(undefined);
    setFailure(undefined);
    try {
      const svc = await signedInClient();
      if (action === 'rotate') onChange(await svc.developerKeys.rotate({ params: { credential_id: credential.credential_id } }));
      else {
        await svc.developerKeys.revoke({ params: { credential_id: credential.credential_id } });
        onChange();
      }
    } catch (error) {
      setFailure(error);
    }
  };
  const active = credential.status === 'active';
  return (
    <tr>
      <td>{credential.name}</td>
      <td>
        <code>{credential.key_prefix}</code>
      </td>
      <td>{credential.scopes.join(' ')}</td>
      <KeyLimitsCell credential={credential} onSaved={() => onChange()} />
      <td>{credential.status}</td>
      <td class="actions">
        {active && !confirming && (
          <>
            <button type="button" onClick={() => setConfirming('rotate')} aria-label={`Rotate ${credential.name}`}>
              Rotate
            </button>{' '}
            <button type="button" class="danger" onClick={() => setConfirming('revoke')} aria-label={`Revoke ${credential.name}`}>
              Revoke
            </button>{' '}
          </>
        )}
        {active && confirming && (
          <fieldset class="confirm">
            <legend>
              {confirming === 'rotate' ? 'Rotate' : 'Revoke'} {credential.name}? {CONSEQUENCE[confirming]}
            </legend>
            <button type="button" class="danger" onClick={() => act(confirming)} aria-label={`Yes, ${confirming} ${credential.name}`}>
              {confirming === 'rotate' ? 'Yes, rotate' : 'Yes, revoke'}
            </button>{' '}
            <button type="button" ref={cancel} onClick={() => setConfirming(undefined)}>
              Cancel
            </button>
          </fieldset>
        )}
        <button type="button" onClick={() => setShowReceipts(!showReceipts)} aria-expanded={showReceipts} aria-label={`Receipts of ${credential.name}`}>
          Receipts
        </button>
        {showReceipts && <Receipts credentialId={credential.credential_id} />}
        {failure !== undefined && <ErrorNote error={failure} />}
      </td>
    </tr>
  );
}

/** Whether a key answers a search: its name, key prefix or a scope holds every word, case aside. */
const matches = (credential: DeveloperCredential, search: string) => {
  const text = `${credential.name} ${credential.key_prefix} ${credential.scopes.join(' ')}`.toLowerCase();
  return search
    .toLowerCase()
    .split(/\s+/)
    .every((word) => text.includes(word));
};

/** Developer keys: create with scopes, rotate, revoke, and each key's signed receipts. */
export function KeysPage() {
  useTitle('Developer keys');
  const [issued, setIssued] = useState<DeveloperCredentialSecretResponse | undefined>();
  const [failure, setFailure] = useState<unknown>();
  const [search, setSearch] = useState('');
  const [loaded, reload] = useLoad(async (signal) => {
    const svc = await signedInClient();
    const [whoami, keys] = await Promise.all([svc.oauth.whoami(undefined, { signal }), svc.developerKeys.list({ query: { limit: 100 } }, { signal })]);
    return { whoami, keys };
  }, []);
  const create = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    setFailure(undefined);
    try {
      const svc = await signedInClient();
      const chosen = scopes.filter((scope) => data.get(`scope:${scope}`) === 'on');
      if (chosen.length === 0) {
        setFailure(new Error('Choose at least one scope: a key with no scope could call nothing.'));
        form.querySelector<HTMLInputElement>('input[name^="scope:"]')?.focus();
        return;
      }
      // Only the limits given: an absent one takes the server's default for keys.
      const limits = Object.fromEntries(
        keyLimitNames.flatMap((name) => {
          const value = String(data.get(`limit:${name}`) ?? '').trim();
          return value === '' ? [] : [[name, Number(value)]];
        }),
      );
      setIssued(
        await svc.developerKeys.create({
          body: { name: String(data.get('name') ?? ''), scopes: chosen, ...(Object.keys(limits).length > 0 ? { limits } : {}) },
        }),
      );
      form.reset();
      reload();
    } catch (error) {
      setFailure(error);
    }
  };
  const changed = (next?: DeveloperCredentialSecretResponse) => {
    // A failure shown earlier is stale once something else has succeeded.
    setFailure(undefined);
    setIssued(next);
    reload();
  };
  return (
    <RequireSession>
      <h1>Developer keys</h1>
      {loaded.state === 'done' && (
        <p class="meta">
          Signed in as {loaded.value.whoami.kind} <code>{loaded.value.whoami.id}</code>
        </p>
      )}
      {issued && <SecretOnce issued={issued} />}
      <form class="stack panel" onSubmit={create} aria-labelledby="create-heading">
        <h2 id="create-heading">Create a key</h2>
        <label>
          <span>
            Name <Required />
          </span>
          <input name="name" required maxLength={100} />
        </label>
        <fieldset>
          <legend>
            Scopes: at least one <Required />
          </legend>
          {scopes.map((scope) => (
            <label class="inline" key={scope}>
              <input type="checkbox" name={`scope:${scope}`} /> {scope}
            </label>
          ))}
        </fieldset>
        <fieldset>
          <legend>Limits (empty: the server's default for keys)</legend>
          <div class="row">
            {keyLimitNames.map((name) => (
              <label key={name}>
                {name.replaceAll('_', ' ')}
                <input
                  name={`limit:${name}`}
                  type="number"
                  inputMode="numeric"
                  min={name.startsWith('credits') ? 0 : 1}
                  max={keyLimitMaximums[name]}
                  step={1}
                />
              </label>
            ))}
          </div>
        </fieldset>
        <button type="submit">Create the key</button>
      </form>
      {failure !== undefined && <ErrorNote error={failure} />}
      {loaded.state === 'failed' && <ErrorNote error={loaded.error} />}
      {loaded.state === 'done' && (
        <section aria-labelledby="keys-heading">
          <h2 id="keys-heading">Your keys</h2>
          {loaded.value.keys.data.length > 0 && (
            <label class="search">
              Search keys
              <input type="search" value={search} onInput={(event) => setSearch(event.currentTarget.value)} />
            </label>
          )}
          {loaded.value.keys.data.length === 0 ? (
            <p>No keys yet: create one above, then call svc with it as a bearer token.</p>
          ) : (
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Key</th>
                    <th scope="col">Scopes</th>
                    <th scope="col">Limits</th>
                    <th scope="col">Status</th>
                    <th scope="col">Actions</th>
                  </tr>
                </thead>
                <tbody>
                  {loaded.value.keys.data
                    .filter((credential) => matches(credential, search))
                    .map((credential) => (
                      <KeyRow key={credential.credential_id} credential={credential} onChange={changed} />
                    ))}
                </tbody>
              </table>
            </div>
          )}
        </section>
      )}
    </RequireSession>
  );
}
