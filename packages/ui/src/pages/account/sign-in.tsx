import { useLocation } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { SvcError } from '@svc/client';
import { ErrorNote } from '../../components/error-note.tsx';
import { Required } from '../../components/required.tsx';
import { useTitle } from '../../hooks.ts';
import { BASE } from '../../links.ts';
import { finishSignIn, startSignIn } from '../../oauth-flow.ts';
import { session } from '../../session.ts';
import { clientWithToken } from '../../signed-in.ts';

/** Who the server says a pasted token is: `invalid` when it refuses it (401), else whoami's kind and credential. */
async function checkToken(token: string): Promise<{ kind: string; credential: string }> {
  const client = await clientWithToken(token);
  try {
    return await client.oauth.whoami();
  } catch (error) {
    if (SvcError.isInstance(error) && error.status === 401) return { kind: 'invalid', credential: 'none' };
    throw error;
  }
}

/** Sign in through svc's own OAuth (code + PKCE), or paste a developer key or the operator token. */
export function SignInPage() {
  useTitle('Sign in');
  const { route } = useLocation();
  const [failure, setFailure] = useState<unknown>();
  const signIn = () => startSignIn().catch(setFailure);
  const [checking, setChecking] = useState(false);
  // The server is asked who the token is before the session exists: a wrong token never shows the operator's header.
  const useOperatorToken = async (event: Event) => {
    event.preventDefault();
    const token = String(new FormData(event.currentTarget as HTMLFormElement).get('operator_token') ?? '').trim();
    setFailure(undefined);
    setChecking(true);
    try {
      const who = (await checkToken(token)).kind;
      if (who === 'operator') {
        session.value = { kind: 'operator', accessToken: token };
        route(`${BASE}operator`);
      } else setFailure(new Error(`This token is not the operator token (the server knows it as ${who === 'invalid' ? 'no one' : `a ${who}`}).`));
    } catch (error) {
      setFailure(error);
    } finally {
      setChecking(false);
    }
  };
  // A developer key is checked the same way: only a key the server resolves as one makes a session.
  const useDeveloperKey = async (event: Event) => {
    event.preventDefault();
    const key = String(new FormData(event.currentTarget as HTMLFormElement).get('developer_key') ?? '').trim();
    setFailure(undefined);
    setChecking(true);
    try {
      const who = await checkToken(key);
      if (who.credential === 'developer_key') {
        session.value = { kind: 'key', accessToken: key };
        route(`${BASE}jobs`);
      } else
        setFailure(new Error(who.kind === 'invalid' ? 'The server does not know this key: it may be revoked or mistyped.' : 'This is not a developer key.'));
    } catch (error) {
      setFailure(error);
    } finally {
      setChecking(false);
    }
  };
  return (
    <>
      <h1>Sign in</h1>
      <section class="panel" aria-labelledby="oauth-heading">
        <h2 id="oauth-heading">As an agent of this server</h2>
        <p>
          The console registers itself as an OAuth client of this server and signs in with an authorization code and PKCE. The tokens stay in this tab. Every
          sign-in from this browser is the same agent, with its keys, credits and jobs.
        </p>
        <button type="button" onClick={signIn}>
          Sign in with svc
        </button>
      </section>
      <section class="panel" aria-labelledby="key-heading">
        <h2 id="key-heading">With a developer key</h2>
        <p>The console acts with the key's scopes only. Signing out forgets the key in this tab; it stays valid until you revoke it.</p>
        <form onSubmit={useDeveloperKey} class="stack">
          <label>
            <span>
              Developer key (svc_dk_…) <Required />
            </span>
            <input name="developer_key" type="password" autoComplete="off" required minLength={16} />
          </label>
          <button type="submit" disabled={checking}>
            {checking ? 'Checking the key…' : 'Use the developer key'}
          </button>
        </form>
      </section>
      <section class="panel" aria-labelledby="operator-heading">
        <h2 id="operator-heading">As the operator</h2>
        <form onSubmit={useOperatorToken} class="stack">
          <label>
            <span>
              Operator token (SVC_OPERATOR_TOKEN, or the file the server printed at start) <Required />
            </span>
            <input name="operator_token" type="password" autoComplete="off" required minLength={16} />
          </label>
          <button type="submit" disabled={checking}>
            {checking ? 'Checking the token…' : 'Use the operator token'}
          </button>
        </form>
      </section>
      {failure !== undefined && <ErrorNote error={failure} />}
    </>
  );
}

/** Where /oauth/authorize sends the browser back: finishes the sign-in, then leaves for the keys. */
export function CallbackPage() {
  useTitle('Signing in');
  const { route } = useLocation();
  const [failure, setFailure] = useState<unknown>();
  useEffect(() => {
    finishSignIn(location.href).then(() => route(`${BASE}keys`, true), setFailure);
  }, []);
  return (
    <>
      <h1>Signing in…</h1>
      {failure !== undefined && <ErrorNote error={failure} />}
    </>
  );
}
