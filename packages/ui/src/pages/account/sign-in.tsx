import { useLocation } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { ErrorNote } from '../../components/error-note.tsx';
import { useTitle } from '../../hooks.ts';
import { BASE } from '../../links.ts';
import { finishSignIn, startSignIn } from '../../oauth-flow.ts';
import { session } from '../../session.ts';

/** Sign in through svc's own OAuth (code + PKCE), or paste the operator token. */
export function SignInPage() {
  useTitle('Sign in');
  const { route } = useLocation();
  const [failure, setFailure] = useState<unknown>();
  const signIn = () => startSignIn().catch(setFailure);
  const useOperatorToken = (event: Event) => {
    event.preventDefault();
    const token = String(new FormData(event.currentTarget as HTMLFormElement).get('operator_token') ?? '').trim();
    session.value = { kind: 'operator', accessToken: token };
    route(`${BASE}operator`);
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
      <section class="panel" aria-labelledby="operator-heading">
        <h2 id="operator-heading">As the operator</h2>
        <form onSubmit={useOperatorToken} class="stack">
          <label>
            Operator token (SVC_OPERATOR_TOKEN, or the file the server printed at start)
            <input name="operator_token" type="password" autoComplete="off" required minLength={16} />
          </label>
          <button type="submit">Use the operator token</button>
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
