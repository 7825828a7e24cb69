import { type CatalogRequestReceiptResponse, catalogRequestStatuses, sources } from '@svc/schemas';
import { useState } from 'preact/hooks';
import { ErrorNote } from '../../components/error-note.tsx';
import { Required } from '../../components/required.tsx';
import { useLoad, useTitle } from '../../hooks.ts';
import { session } from '../../session.ts';
import { signedInClient } from '../../signed-in.ts';
import { RequireSession } from './require-session.tsx';

function History({ requestId }: { requestId: string }) {
  const [loaded] = useLoad(async (signal) => (await signedInClient()).requests.receipt({ params: { request_id: requestId } }, { signal }), [requestId]);
  if (loaded.state === 'loading') return <p>Loading the history…</p>;
  if (loaded.state === 'failed') return <ErrorNote error={loaded.error} />;
  return <HistoryList receipt={loaded.value} />;
}

export function HistoryList({ receipt }: { receipt: CatalogRequestReceiptResponse }) {
  return (
    <ol class="history">
      {receipt.history.map((entry) => (
        <li key={entry.at + entry.status}>
          <time dateTime={entry.at}>{new Date(entry.at).toLocaleString()}</time> {entry.actor}: {entry.previous_status ? `${entry.previous_status} → ` : ''}
          {entry.status}
          {entry.note && <span class="snippet"> — {entry.note}</span>}
        </li>
      ))}
    </ol>
  );
}

/**
 * Catalog requests, for their filers and for the operator: the list (everyone's for the
 * operator), each request's append-only history, filing a source request, and moderation.
 */
export function RequestsPage() {
  useTitle('Catalog requests');
  const operator = session.value?.kind === 'operator';
  const [opened, setOpened] = useState<string | undefined>();
  // Bumped after a moderation, so the open history is read again.
  const [moderations, setModerations] = useState(0);
  const [failure, setFailure] = useState<unknown>();
  const [loaded, reload] = useLoad(
    async (signal) => (await signedInClient()).requests.status({ query: { limit: 100, all_requests: operator } }, { signal }),
    [operator],
  );
  const file = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    setFailure(undefined);
    try {
      await (await signedInClient()).requests.source({
        body: {
          repo: String(data.get('repo') ?? ''),
          source: String(data.get('source') ?? '') as (typeof sources)[number],
          use_case: String(data.get('use_case') ?? ''),
          target_tool: String(data.get('target_tool') ?? ''),
        },
      });
      form.reset();
      reload();
    } catch (error) {
      setFailure(error);
    }
  };
  const moderate = async (event: Event, requestId: string) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget as HTMLFormElement);
    setFailure(undefined);
    try {
      const note = String(data.get('note') ?? '').trim();
      await (await signedInClient()).requests.moderate({
        params: { request_id: requestId },
        body: { status: String(data.get('status')) as 'accepted', ...(note ? { note } : {}) },
      });
      setModerations((count) => count + 1);
      reload();
    } catch (error) {
      setFailure(error);
    }
  };
  return (
    <RequireSession>
      <h1>{operator ? 'Moderation queue' : 'Catalog requests'}</h1>
      {!operator && (
        <form class="stack panel" onSubmit={file} aria-labelledby="file-heading">
          <h2 id="file-heading">Ask for a source</h2>
          <label>
            <span>
              Repository <Required />
            </span>
            <input name="repo" required maxLength={300} placeholder="BAAI/bge-m3" />
          </label>
          <label>
            <span>
              Source <Required />
            </span>
            <select name="source" required>
              {sources.map((source) => (
                <option key={source} value={source}>
                  {source}
                </option>
              ))}
            </select>
          </label>
          <label>
            <span>
              Use case <Required />
            </span>
            <textarea name="use_case" required rows={2} maxLength={2000} />
          </label>
          <label>
            <span>
              Target tool <Required />
            </span>
            <input name="target_tool" required maxLength={100} placeholder="vllm" />
          </label>
          <button type="submit">File the request</button>
        </form>
      )}
      {failure !== undefined && <ErrorNote error={failure} />}
      {loaded.state === 'failed' && <ErrorNote error={loaded.error} />}
      {loaded.state === 'done' && (
        <ul class="results">
          {loaded.value.data.length === 0 && <li>No requests yet. File one with the form above to ask for an artifact to be added to the catalog.</li>}
          {loaded.value.data.map((request) => (
            <li key={request.request_id}>
              <span class="badge">{request.kind}</span>{' '}
              <span class="badge" data-testid="request-status">
                {request.status}
              </span>{' '}
              <span class="snippet">{request.details.repo ?? request.details.artifact_id ?? request.details.capability}</span>
              <p class="snippet">{request.details.use_case}</p>
              <p class="meta">
                <code>{request.request_id}</code> · {request.requester} · screening {request.screening.action}
              </p>
              <button
                type="button"
                aria-expanded={opened === request.request_id}
                onClick={() => setOpened(opened === request.request_id ? undefined : request.request_id)}
              >
                History{operator ? ' and moderation' : ''}
              </button>
              {opened === request.request_id && (
                <>
                  <History key={`${request.request_id}:${moderations}`} requestId={request.request_id} />
                  {operator && (
                    <form class="filters" onSubmit={(event) => moderate(event, request.request_id)} aria-label={`Moderate ${request.request_id}`}>
                      <label>
                        New status
                        <select name="status">
                          {catalogRequestStatuses
                            .filter((status) => status !== 'submitted' && status !== 'duplicate')
                            .map((status) => (
                              <option key={status} value={status}>
                                {status}
                              </option>
                            ))}
                        </select>
                      </label>
                      <label class="wide">
                        Note
                        <input name="note" maxLength={2000} />
                      </label>
                      <button type="submit">Set the status</button>
                    </form>
                  )}
                </>
              )}
            </li>
          ))}
        </ul>
      )}
    </RequireSession>
  );
}
