import { catalogContract, rankingSlugs, trendingWindows } from '@svc/schemas';
import { useLocation } from 'preact-iso';
import { clientFor } from '../api.ts';
import { ErrorNote } from '../components/error-note.tsx';
import { useLoad, useTitle } from '../hooks.ts';
import { withQuery } from '../links.ts';
import { ArtifactLine } from './catalog.tsx';

/** Rankings by slug and trending by window: attested pulls only, never redirects. */
export function RankingsPage() {
  useTitle('Rankings');
  const { query } = useLocation();
  const slug = (rankingSlugs as readonly string[]).includes(query.slug ?? '') ? (query.slug as (typeof rankingSlugs)[number]) : 'most-downloaded';
  const window = (trendingWindows as readonly string[]).includes(query.window ?? '') ? (query.window as (typeof trendingWindows)[number]) : '7d';
  const [loaded] = useLoad(
    async (signal) => {
      const { catalog } = await clientFor({ catalog: catalogContract });
      const [ranking, trending] = await Promise.all([
        catalog.rankings({ params: { slug }, query: { limit: 25 } }, { signal }),
        catalog.trending({ query: { window, limit: 25 } }, { signal }),
      ]);
      return { ranking, trending };
    },
    [slug, window],
  );
  return (
    <>
      <h1>Rankings and trending</h1>
      <nav aria-label="Rankings" class="tabs">
        {rankingSlugs.map((name) => (
          <a key={name} href={withQuery('rankings', { slug: name, window })} aria-current={name === slug ? 'page' : undefined}>
            {name}
          </a>
        ))}
      </nav>
      {loaded.state === 'loading' && <p>Loading…</p>}
      {loaded.state === 'failed' && <ErrorNote error={loaded.error} />}
      {loaded.state === 'done' && (
        <div class="columns">
          <section aria-labelledby="ranking-heading">
            <h2 id="ranking-heading">{loaded.value.ranking.title}</h2>
            <p class="meta">{loaded.value.ranking.description}</p>
            <ol class="results">
              {loaded.value.ranking.rows.map((row) => (
                <li key={row.artifact.id}>
                  <ArtifactLine artifact={row.artifact} />
                </li>
              ))}
            </ol>
          </section>
          <section aria-labelledby="trending-heading">
            <h2 id="trending-heading">Trending ({window})</h2>
            <nav aria-label="Trending window" class="tabs">
              {trendingWindows.map((name) => (
                <a key={name} href={withQuery('rankings', { slug, window: name })} aria-current={name === window ? 'page' : undefined}>
                  {name}
                </a>
              ))}
            </nav>
            <ol class="results">
              {loaded.value.trending.rows.map((row) => (
                <li key={row.artifact.id}>
                  <ArtifactLine artifact={row.artifact} /> <span class="meta">{row.pulls} pulls in the window</span>
                </li>
              ))}
            </ol>
          </section>
        </div>
      )}
    </>
  );
}
