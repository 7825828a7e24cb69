import { type ArtifactSummary, artifactTypes, catalogContract, hostings, licenses, reviewStatuses, searchSorts, sources, tools } from '@svc/schemas';
import { useLocation } from 'preact-iso';
import { clientFor } from '../api.ts';
import { ErrorNote } from '../components/error-note.tsx';
import { useLoad, useTitle } from '../hooks.ts';
import { artifactHref, withQuery } from '../links.ts';

const FACETS = [
  { name: 'type', label: 'Type', values: artifactTypes },
  { name: 'license', label: 'Licence', values: licenses },
  { name: 'hosting', label: 'Hosting', values: hostings },
  { name: 'source', label: 'Source', values: sources },
  { name: 'worksWith', label: 'Works with', values: tools },
  { name: 'reviewStatus', label: 'Review status', values: reviewStatuses },
] as const;
type FacetName = (typeof FACETS)[number]['name'];

/** One artifact in a list: name, summary and the facts a person compares. */
export function ArtifactLine({ artifact }: { artifact: ArtifactSummary }) {
  return (
    <>
      <a href={artifactHref(artifact.id)} class="artifact-name">
        {artifact.name}
      </a>{' '}
      <span class="badge">{artifact.type}</span> <span class="badge">{artifact.reviewStatus}</span>
      <p class="snippet">{artifact.summary}</p>
      <p class="meta">
        {artifact.license} · {artifact.hosting} · {artifact.downloads} pulls ·{' '}
        {artifact.rating === null ? 'no reviews' : `${artifact.rating.toFixed(1)} / 5 (${artifact.reviewCount})`}
      </p>
    </>
  );
}

/** Catalog search: full text, or embedding similarity with the semantic switch; facet counts; the ranking explained per row. */
export function CatalogPage() {
  useTitle('Catalog');
  const { query, route } = useLocation();
  const request = {
    q: query.q || undefined,
    sort: (query.sort || undefined) as (typeof searchSorts)[number] | undefined,
    ...Object.fromEntries(FACETS.map((facet) => [facet.name, query[facet.name] || undefined])),
    semantic: query.semantic === '1',
    explain: query.explain === '1',
    summary: true,
    cursor: query.cursor || undefined,
  } as Record<string, unknown>;
  const [loaded] = useLoad(
    async (signal) => (await clientFor({ catalog: catalogContract })).catalog.search({ query: request as never }, { signal }),
    [JSON.stringify(request)],
  );
  const submit = (event: Event) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget as HTMLFormElement);
    const values = Object.fromEntries([...data.entries()].map(([name, value]) => [name, String(value).trim()]));
    route(withQuery('catalog', values));
  };
  const facetValue = (name: FacetName) => query[name] ?? '';
  return (
    <>
      <h1>Catalog</h1>
      <form class="filters" key={JSON.stringify(query)} onSubmit={submit} aria-label="Search the catalog">
        <label class="wide">
          Search
          <input name="q" type="search" maxLength={500} defaultValue={query.q ?? ''} />
        </label>
        <label>
          Sort
          <select name="sort" defaultValue={query.sort ?? ''}>
            <option value="">best</option>
            {searchSorts.map((sort) => (
              <option key={sort} value={sort}>
                {sort}
              </option>
            ))}
          </select>
        </label>
        {FACETS.map((facet) => (
          <label key={facet.name}>
            {facet.label}
            <select name={facet.name} defaultValue={facetValue(facet.name)}>
              <option value="">any</option>
              {facet.values.map((value) => (
                <option key={value} value={value}>
                  {value}
                  {loaded.state === 'done' && loaded.value.summary ? ` (${loaded.value.summary[facet.name][value] ?? 0})` : ''}
                </option>
              ))}
            </select>
          </label>
        ))}
        <label class="inline">
          <input type="checkbox" name="semantic" value="1" defaultChecked={query.semantic === '1'} /> Semantic (meaning, not words)
        </label>
        <label class="inline">
          <input type="checkbox" name="explain" value="1" defaultChecked={query.explain === '1'} /> Explain the ranking
        </label>
        <button type="submit">Search</button>
      </form>
      {loaded.state === 'loading' && <p aria-live="polite">Searching…</p>}
      {loaded.state === 'failed' && <ErrorNote error={loaded.error} />}
      {loaded.state === 'done' && (
        <section aria-labelledby="results-heading">
          <h2 id="results-heading">
            {loaded.value.summary ? `${loaded.value.summary.total} ${loaded.value.summary.total === 1 ? 'artifact' : 'artifacts'}` : 'Results'}
            {loaded.value.semantic && loaded.value.embeddingModel ? ` · semantic (${loaded.value.embeddingModel})` : ''}
          </h2>
          <ol class="results">
            {loaded.value.rows.map((row) => (
              <li key={row.id}>
                <ArtifactLine artifact={row} />
                {row.explain && (
                  <p class="explain">
                    {row.explain.method}
                    {row.explain.score === null ? '' : ` ${row.explain.score.toFixed(3)}`}: {row.explain.reason}
                  </p>
                )}
              </li>
            ))}
          </ol>
          {loaded.value.nextCursor && <a href={withQuery('catalog', { ...query, cursor: loaded.value.nextCursor })}>Next page</a>}
        </section>
      )}
    </>
  );
}
