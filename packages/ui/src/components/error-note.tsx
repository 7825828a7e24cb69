import { SvcError } from '@svc/client';

/** An API failure as a person reads it: the server's message, its stable code and the request id to quote. */
export function ErrorNote({ error }: { error: unknown }) {
  const known = error instanceof SvcError ? error : undefined;
  return (
    <div class="error" role="alert">
      <p>{known ? known.message : error instanceof Error ? error.message : String(error)}</p>
      {known && (
        <p class="meta">
          {known.status} <code>{known.code}</code>
          {known.requestId && (
            <>
              {' '}
              · request <code>{known.requestId}</code>
            </>
          )}
        </p>
      )}
    </div>
  );
}
