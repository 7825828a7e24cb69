import { BASE } from './links.ts';
import { session } from './session.ts';

/** Signing out revokes the OAuth tokens on the server; the OAuth code loads only then. */
const signOut = () => import('./oauth-flow.ts').then((module) => module.signOut());

/** Who the console acts as: nobody (the public pages), an OAuth sign-in, or the operator token. */
export function SessionBadge() {
  const current = session.value;
  return (
    <p class="session">
      {current ? (
        <>
          <span>{current.kind === 'operator' ? 'Operator' : current.kind === 'key' ? 'Signed in with a key' : 'Signed in'}</span>{' '}
          <button type="button" onClick={signOut}>
            Sign out
          </button>
        </>
      ) : (
        <a href={`${BASE}sign-in`}>Sign in</a>
      )}
    </p>
  );
}
