import type { DeveloperCredential } from '@svc/schemas';
import { keyLimitMaximums, keyLimitNames } from '@svc/schemas';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ErrorNote } from '../../components/error-note.tsx';
import { signedInClient } from '../../signed-in.ts';

const words = (name: string) => name.replaceAll('_', ' ');

/** A key's limits in words: each set one, or that all follow the server's default. */
export function limitsInWords(limits: DeveloperCredential['limits']): string {
  const set = Object.entries(limits).filter(([, value]) => value !== null);
  return set.length === 0 ? "server's defaults" : set.map(([name, value]) => `${words(name)} ${value}`).join(', ');
}

/**
 * A key's limits edited where they are shown (`PATCH /v1/developer/credentials/:id`): each field
 * starts at the key's value; an emptied field is sent as null (the server's default for keys
 * applies), an unchanged one is not sent at all, so a save changes only what was edited.
 */
export function KeyLimitsEditor({ credential, onSaved, onCancel }: { credential: DeveloperCredential; onSaved: () => void; onCancel: () => void }) {
  const [failure, setFailure] = useState<unknown>();
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), []);
  const save = async (event: Event) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget as HTMLFormElement);
    const limits = Object.fromEntries(
      keyLimitNames.flatMap((name) => {
        const text = String(data.get(name) ?? '').trim();
        const value = text === '' ? null : Number(text);
        return value === credential.limits[name] ? [] : [[name, value]];
      }),
    );
    setFailure(undefined);
    try {
      if (Object.keys(limits).length > 0)
        await (await signedInClient()).developerKeys.update({ params: { credential_id: credential.credential_id }, body: { limits } });
      onSaved();
    } catch (error) {
      setFailure(error);
    }
  };
  return (
    <form class="stack limits-editor" onSubmit={save} aria-label={`Limits of ${credential.name}`}>
      {keyLimitNames.map((name, index) => (
        <label key={name}>
          {words(name)}
          <input
            ref={index === 0 ? first : undefined}
            name={name}
            type="number"
            inputMode="numeric"
            min={name.startsWith('credits') ? 0 : 1}
            max={keyLimitMaximums[name]}
            step={1}
            defaultValue={credential.limits[name] === null ? '' : String(credential.limits[name])}
            placeholder="default"
          />
        </label>
      ))}
      <p class="meta">Empty: the server's default for keys. The next request on every replica is held to the new limits.</p>
      <div>
        <button type="submit">Save the limits</button>{' '}
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
      {failure !== undefined && <ErrorNote error={failure} />}
    </form>
  );
}

/**
 * The limits cell of a key's row, on the owner's Keys page and the operator's All keys alike: the
 * limits in words and, on an active key, an Edit button that turns the cell into the editor.
 */
export function KeyLimitsCell({ credential, onSaved }: { credential: DeveloperCredential; onSaved: () => void }) {
  const [editing, setEditing] = useState(false);
  return (
    <td data-testid="key-limits">
      {editing ? (
        <KeyLimitsEditor
          credential={credential}
          onCancel={() => setEditing(false)}
          onSaved={() => {
            setEditing(false);
            onSaved();
          }}
        />
      ) : (
        <>
          <span class="meta">{limitsInWords(credential.limits)}</span>{' '}
          {credential.status === 'active' && (
            <button type="button" onClick={() => setEditing(true)} aria-label={`Edit the limits of ${credential.name}`}>
              Edit
            </button>
          )}
        </>
      )}
    </td>
  );
}
