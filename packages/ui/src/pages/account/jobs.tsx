import type { BatchJob, BatchJobResult } from '@svc/schemas';
import { useState } from 'preact/hooks';
import { ErrorNote } from '../../components/error-note.tsx';
import { useTitle } from '../../hooks.ts';
import { signedInClient } from '../../signed-in.ts';
import { RequireSession } from './require-session.tsx';

/** The contract has no list of jobs: the console remembers, in this tab, the ids it submitted. */
const JOBS_KEY = 'svc.console.jobs';
const rememberedJobs = (): string[] => JSON.parse(sessionStorage.getItem(JOBS_KEY) ?? '[]') as string[];

/** Jobs: submit a small calculation, follow any job id to its status and result. */
export function JobsPage() {
  useTitle('Jobs');
  const [jobIds, setJobIds] = useState(rememberedJobs);
  const [followed, setFollowed] = useState<{ job: BatchJob; result?: BatchJobResult } | undefined>();
  const [failure, setFailure] = useState<unknown>();

  const follow = async (jobId: string) => {
    setFailure(undefined);
    try {
      const svc = await signedInClient();
      // The client's wait polls the job until it finishes, with the job's own backoff.
      const job = await svc.jobs.wait(jobId, { onProgress: (current) => setFollowed({ job: current }) });
      setFollowed({ job, result: job.status === 'cancelled' ? undefined : await svc.jobs.result({ params: { job_id: jobId } }) });
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
      const ids = [job.job_id, ...jobIds.filter((id) => id !== job.job_id)].slice(0, 20);
      sessionStorage.setItem(JOBS_KEY, JSON.stringify(ids));
      setJobIds(ids);
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
          Expressions, one per line (up to 8)
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
      {jobIds.length > 0 && (
        <section aria-labelledby="recent-jobs-heading">
          <h2 id="recent-jobs-heading">Submitted from this tab</h2>
          <ul>
            {jobIds.map((id) => (
              <li key={id}>
                <button type="button" onClick={() => follow(id)}>
                  Follow {id}
                </button>
              </li>
            ))}
          </ul>
        </section>
      )}
    </RequireSession>
  );
}
