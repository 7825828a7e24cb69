import { type Artifact, catalogContract } from '@svc/schemas';
import { useLocation } from 'preact-iso';
import { useState } from 'preact/hooks';
import { clientFor, surfacesOnce } from '../api.ts';
import { CopyButton } from '../components/copy-button.tsx';
import { ModelCard } from '../components/model-card.tsx';
import { fileDownloadUrl, upstreamUrl } from './artifact-links.ts';
import { ErrorNote } from '../components/error-note.tsx';
import { Required } from '../components/required.tsx';
import { SafeLink } from '../components/safe-link.tsx';
import { useFirstPaintHandover } from '../first-paint-handover.ts';
import { useLoad, useTitle } from '../hooks.ts';

/** A word the shell takes as it is, or the word in single quotes. */
const shellWord = (value: string) => (/^[A-Za-z0-9._:/@%+=-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`);

/** The exact command that downloads and verifies this artifact's hosted files from this server. */
export const downloadCommand = (apiUrl: string, artifactId: string) => `SVC_API_URL=${shellWord(apiUrl)} svc download ${shellWord(artifactId)}`;

const bytes = (size: number) => (size < 1024 ? `${size} B` : size < 1024 ** 2 ? `${(size / 1024).toFixed(1)} KiB` : `${(size / 1024 ** 2).toFixed(1)} MiB`);

/** An artifact as the Hugging Face Hub shows a model: versions, files with sha256 and size, trust, reviews, and the command to download. */
export function ArtifactPage() {
  const { query } = useLocation();
  const id = query.id ?? '';
  useTitle(`Artifact ${id}`);
  const [loaded] = useLoad(
    async (signal) => {
      const { catalog } = await clientFor({ catalog: catalogContract });
      const params = { id };
      const [artifact, versions, files, trust, reviews, reviewSummary] = await Promise.all([
        catalog.artifact({ params }, { signal }),
        catalog.versions({ params }, { signal }),
        catalog.files({ params, query: { limit: 200 } }, { signal }),
        catalog.trustBundles({ params }, { signal }),
        catalog.reviews({ params, query: { limit: 20 } }, { signal }),
        catalog.reviewSummary({ params }, { signal }),
      ]);
      return { artifact, versions, files, trust, reviews, reviewSummary, apiUrl: (await surfacesOnce()).apiUrl };
    },
    [id],
  );
  useFirstPaintHandover(loaded.state !== 'loading');
  if (loaded.state === 'loading') return <h1>Loading {id}…</h1>;
  if (loaded.state === 'failed')
    return (
      <>
        <h1>Artifact {id}</h1>
        <ErrorNote error={loaded.error} />
      </>
    );
  const { artifact, versions, files, trust, reviews, reviewSummary, apiUrl } = loaded.value;
  const command = downloadCommand(apiUrl, artifact.id);
  // `svc download` fetches hosted files only: with none here, its command would fetch nothing.
  const hostedHere = files.rows.some((file) => file.hosted);
  return (
    <>
      <ArtifactIntro artifact={artifact} />
      {hostedHere ? (
        <section class="panel" aria-labelledby="download-heading">
          <h2 id="download-heading">Download</h2>
          <p>Every hosted file is checked against its planned SHA-256 and size before it is written, and the pull is attested.</p>
          <pre class="command">
            <code data-testid="download-command">{command}</code>
          </pre>
          <CopyButton value={command} label="Copy the command" />
        </section>
      ) : (
        <MirrorRequest artifactId={artifact.id} />
      )}
      <section aria-labelledby="files-heading">
        <h2 id="files-heading">Files{files.revision ? ` at ${files.revision.slice(0, 12)}` : ''}</h2>
        {files.rows.length === 0 && <p>No files are listed for this artifact.</p>}
        <div class="table-wrap" hidden={files.rows.length === 0}>
          <table>
            <thead>
              <tr>
                <th scope="col">Path</th>
                <th scope="col">Size</th>
                <th scope="col">SHA-256</th>
                <th scope="col">Download</th>
              </tr>
            </thead>
            <tbody>
              {files.rows.map((file) => (
                <tr key={`${file.revision}/${file.path}`}>
                  <td>{file.path}</td>
                  <td>{bytes(file.sizeBytes)}</td>
                  <td>
                    <code class="hash">{file.sha256}</code> <CopyButton value={file.sha256} label="Copy" accessibleLabel={`Copy the SHA-256 of ${file.path}`} />
                  </td>
                  <td>
                    {file.hosted ? (
                      <a href={fileDownloadUrl(apiUrl, artifact.id, file.path)} aria-label={`Download ${file.path}`} data-testid="file-download">
                        Download
                      </a>
                    ) : (
                      'at its source'
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
      <section aria-labelledby="versions-heading">
        <h2 id="versions-heading">Versions</h2>
        <ul>
          {versions.rows.map((version) => (
            <li key={version.revision}>
              <code>{version.revision.slice(0, 12)}</code> {version.isLatest && <span class="badge">latest</span>} {version.fileCount} files,{' '}
              {bytes(version.totalBytes)} · <time dateTime={version.createdAt}>{new Date(version.createdAt).toLocaleDateString()}</time>
              {version.notes && <p class="snippet">{version.notes}</p>}
            </li>
          ))}
        </ul>
      </section>
      <section aria-labelledby="trust-heading">
        <h2 id="trust-heading">Trust bundle</h2>
        {trust.rows.length === 0 ? (
          <p>No trust bundle: nothing vouches for these files beyond the catalog.</p>
        ) : (
          <p class={trust.consistent ? 'ok' : 'error'}>
            {trust.consistent ? 'Every subject digest matches the catalog file.' : `${trust.mismatches.length} subject digests do not match the catalog.`}
          </p>
        )}
        <ul>
          {trust.rows.map((bundle) => (
            <li key={bundle.id}>
              <span class="badge">{bundle.kind}</span> by {bundle.issuer}, {bundle.subjects.length} subjects
              <details class="inert">
                <summary>Statement</summary>
                <pre>{JSON.stringify(bundle.statement, null, 2)}</pre>
              </details>
            </li>
          ))}
        </ul>
      </section>
      <section aria-labelledby="reviews-heading">
        <h2 id="reviews-heading">Reviews</h2>
        <p>
          {reviewSummary.count === 0
            ? 'No reviews yet.'
            : `${reviewSummary.averageRating?.toFixed(1)} / 5 from ${reviewSummary.count} ${reviewSummary.count === 1 ? 'review' : 'reviews'}`}
        </p>
        {reviewSummary.count > 0 && (
          <dl class="distribution">
            {([5, 4, 3, 2, 1] as const).map((stars) => (
              <div key={stars}>
                <dt>{stars} stars</dt>
                <dd>{reviewSummary.distribution[stars]}</dd>
              </div>
            ))}
          </dl>
        )}
        {reviews.rows.map((review) => (
          <article key={review.id} class="post">
            <h3>{review.title}</h3>
            <p class="meta">
              {review.rating} / 5 by {review.author}
            </p>
            <p class="post-text">{review.body}</p>
          </article>
        ))}
      </section>
    </>
  );
}

/** What the artifact is, and its README as its model card: drawn by the page, and by the server in the first response (first-paint.tsx). */
export function ArtifactIntro({ artifact }: { artifact: Artifact }) {
  return (
    <>
      <h1>{artifact.name}</h1>
      <p class="lede">{artifact.summary}</p>
      <p>
        <span class="badge">{artifact.type}</span> <span class="badge">{artifact.license}</span> <span class="badge">{artifact.reviewStatus}</span>{' '}
        {artifact.repo && (
          <span class="meta" data-testid="upstream">
            upstream{' '}
            {upstreamUrl(artifact.source, artifact.repo) ? (
              <SafeLink href={upstreamUrl(artifact.source, artifact.repo)}>{artifact.repo}</SafeLink>
            ) : (
              artifact.repo
            )}
          </span>
        )}{' '}
        {artifact.homepage && <SafeLink href={artifact.homepage}>homepage</SafeLink>}
      </p>
      <p class="description">{artifact.description}</p>
      {artifact.readme && (
        <section class="panel" aria-labelledby="card-heading">
          <h2 id="card-heading">Model card</h2>
          <ModelCard text={artifact.readme} />
        </section>
      )}
    </>
  );
}

/**
 * The files of this artifact are not hosted here: ask the operator to mirror them (the api
 * surface's public mirror request; the operator's queue is the requests page).
 */
function MirrorRequest({ artifactId }: { artifactId: string }) {
  const [outcome, setOutcome] = useState<
    { state: 'idle' | 'sending' } | { state: 'sent'; receipt: { id: string; status: string; duplicate: boolean } } | { state: 'failed'; error: unknown }
  >({ state: 'idle' });
  const submit = async (event: Event) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget as HTMLFormElement);
    setOutcome({ state: 'sending' });
    try {
      const { catalog } = await clientFor({ catalog: catalogContract });
      const receipt = await catalog.mirrorRequest({
        params: { id: artifactId },
        body: { useCase: String(data.get('useCase') ?? '').trim(), targetTool: String(data.get('targetTool') ?? '').trim() },
      });
      setOutcome({ state: 'sent', receipt });
    } catch (error) {
      setOutcome({ state: 'failed', error });
    }
  };
  return (
    <section class="panel" aria-labelledby="mirror-heading">
      <h2 id="mirror-heading">Not hosted here</h2>
      <p>
        This artifact's files stay at their source, so there is nothing to download from this server. Ask its operator to host them with verified downloads.
      </p>
      {outcome.state === 'sent' ? (
        <p role="status" data-testid="mirror-receipt">
          {outcome.receipt.duplicate ? 'You had already asked: ' : 'Requested: '}
          <code>{outcome.receipt.id}</code>, {outcome.receipt.status}.
        </p>
      ) : (
        <form class="stack" onSubmit={submit}>
          <label>
            <span>
              What you would use it for <Required />
            </span>
            <textarea name="useCase" required maxLength={2000} rows={2} />
          </label>
          <label>
            <span>
              The tool that would load it (for example transformers) <Required />
            </span>
            <input name="targetTool" required maxLength={64} />
          </label>
          <button type="submit" disabled={outcome.state === 'sending'}>
            Request a mirror
          </button>
        </form>
      )}
      {outcome.state === 'failed' && <ErrorNote error={outcome.error} />}
    </section>
  );
}
