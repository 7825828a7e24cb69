import { session } from './session.ts';
import { BASE } from './links.ts';

/** Who the console acts as: nobody (the public pages), an OAuth sign-in, or the operator token. */
export function SessionBadge() {
  const current = session.value;
  return (
    <p class="session">
      {current ? (
        <>
          <span>{current.kind === 'operator' ? 'Operator' : 'Signed in'}</span>{' '}
          <button type="button" onClick={() => (session.value = undefined)}>
            Sign out
          </button>
        </>
      ) : (
        <a href={`${BASE}sign-in`}>Sign in</a>
      )}
    </p>
  );
}
