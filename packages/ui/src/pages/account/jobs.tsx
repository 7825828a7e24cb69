import type { BatchJob, BatchJobListResponse, BatchJobResult } from '@svc/schemas';
import { useState } from 'preact/hooks';
import { ErrorNote } from '../../components/error-note.tsx';
import { Required } from '../../components/required.tsx';
import { useLoad, useTitle } from '../../hooks.ts';
import { signedInClient } from '../../signed-in.ts';
import { RequireSession } from './require-session.tsx';

/** Jobs shown per page of the list (GET /v1/jobs, newest first). */
const PAGE_SIZE = 20;

/** Jobs: your jobs (any tab, any client), submit a small calculation, follow a job to its status and result. */
export function JobsPage() {
  useTitle('Jobs');
  // The cursors of the pages before this one, so "Newer" goes back without a second kind of cursor.
  const [cursors, setCursors] = useState<Array<string | undefined>>([undefined]);
  const cursor = cursors[cursors.length - 1];
  const [listed, reloadList] = useLoad(
    async (signal): Promise<BatchJobListResponse> => {
      const svc = await signedInClient();
      return svc.jobs.list({ query: { limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) } }, { signal });
    },
    [cursor],
  );
  const [followed, setFollowed] = useState<{ job: BatchJob; result?: BatchJobResult } | undefined>();
  const [failure, setFailure] = useState<unknown>();

  const follow = async (jobId: string) => {
    setFailure(undefined);
    try {
      const svc = await signedInClient();
      // The client's wait polls the job until it finishes, with the job's own backoff.
      const job = await svc.jobs.wait(jobId, { onProgress: (current) => setFollowed({ job: current }) });
      setFollowed({ job, result: job.status === 'cancelled' ? undefined : await svc.jobs.result({ params: { job_id: jobId } }) });
      reloadList();
    } catch (error) {
      setFailure(error);
    }
  };
  const submit = async (event: Event) => {
    event.preventDefault();
    const expressions = String(new FormData(event.currentTarget as HTMLFormElement).get('expressions') ?? '')
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean);
    setFailure(undefined);
    try {
      const svc = await signedInClient();
      const job = await svc.jobs.submit({
        schema: 'svc.batch-job-request.v1',
        operation: 'calculate',
        items: expressions.map((expression) => ({ expression })),
      });
      // Back to the first page, where the new job is.
      if (cursors.length > 1) setCursors([undefined]);
      else reloadList();
      await follow(job.job_id);
    } catch (error) {
      setFailure(error);
    }
  };
  const lookUp = (event: Event) => {
    event.preventDefault();
    void follow(String(new FormData(event.currentTarget as HTMLFormElement).get('job_id') ?? '').trim());
  };
  return (
    <RequireSession>
      <h1>Jobs</h1>
      <form class="stack panel" onSubmit={submit} aria-labelledby="submit-heading">
        <h2 id="submit-heading">Submit a calculation</h2>
        <label>
          <span>
            Expressions, one per line (up to 8) <Required />
          </span>
          <textarea name="expressions" required rows={3} defaultValue={'2^10\nsqrt(2)'} />
        </label>
        <button type="submit">Submit the job</button>
      </form>
      <form class="filters" onSubmit={lookUp} aria-label="Follow a job">
        <label class="wide">
          Job id
          <input name="job_id" required maxLength={100} />
        </label>
        <button type="submit">Follow</button>
      </form>
      {failure !== undefined && <ErrorNote error={failure} />}
      {followed && (
        <section class="panel" aria-labelledby="job-heading" aria-live="polite">
          <h2 id="job-heading">
            Job <code>{followed.job.job_id}</code>: <span data-testid="job-status">{followed.job.status}</span>
          </h2>
          <p class="meta">
            {followed.job.operation} · {followed.job.progress.succeeded} of {followed.job.progress.total} items done, {followed.job.progress.failed} failed ·
            attempt {followed.job.attempts} of {followed.job.max_attempts}
          </p>
          {followed.result && (
            <pre class="command" data-testid="job-result">
              {JSON.stringify(followed.result, null, 2)}
            </pre>
          )}
        </section>
      )}
      <section aria-labelledby="jobs-heading">
        <h2 id="jobs-heading">Your jobs</h2>
        {listed.state === 'loading' && <p>Loading…</p>}
        {listed.state === 'failed' && <ErrorNote error={listed.error} />}
        {listed.state === 'done' &&
          (listed.value.data.length === 0 && cursors.length === 1 ? (
            <p>No jobs yet (finished jobs are kept for a day at most).</p>
          ) : (
            <>
              <div class="table-wrap">
                <table class="jobs">
                  <caption>Your jobs, newest first</caption>
                  <thead>
                    <tr>
                      <th scope="col">Job</th>
                      <th scope="col">Status</th>
                      <th scope="col">Operation</th>
                      <th scope="col">Items done</th>
                      <th scope="col">Submitted</th>
                    </tr>
                  </thead>
                  <tbody>
                    {listed.value.data.map((job) => (
                      <tr key={job.job_id}>
                        <td>
                          <code>{job.job_id}</code>{' '}
                          <button type="button" onClick={() => follow(job.job_id)} aria-label={`Follow ${job.job_id}`}>
                            Follow
                          </button>
                        </td>
                        <td data-testid="listed-job-status">{job.status}</td>
                        <td>{job.operation}</td>
                        <td>
                          {job.progress.succeeded + job.progress.failed} of {job.progress.total}
                          {job.progress.failed > 0 ? ` (${job.progress.failed} failed)` : ''}
                        </td>
                        <td>
                          <time dateTime={job.created_at}>{new Date(job.created_at).toLocaleString()}</time>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <nav class="row" aria-label="Pages of jobs">
                {cursors.length > 1 && (
                  <button type="button" onClick={() => setCursors(cursors.slice(0, -1))}>
                    Newer jobs
                  </button>
                )}
                {listed.value.next_cursor && (
                  <button type="button" onClick={() => setCursors([...cursors, listed.value.next_cursor ?? undefined])}>
                    Older jobs
                  </button>
                )}
              </nav>
            </>
          ))}
      </section>
    </RequireSession>
  );
}
