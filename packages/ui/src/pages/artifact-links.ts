/**
 * Where an artifact's upstream repository lives, by its source: Hugging Face, GitHub or Ollama's
 * library; no link for an upload or another source (nothing to point at). Each segment of the repo
 * (a catalog field, so untrusted) is encoded, so it can only ever name a path on that host.
 */
export function upstreamUrl(source: string, repo: string): string | undefined {
  const path = repo.split('/').map(encodeURIComponent).join('/');
  if (source === 'huggingface') return `https://huggingface.co/${path}`;
  if (source === 'github') return `https://github.com/${path}`;
  if (source === 'ollama') return `https://ollama.com/library/${path}`;
  return undefined;
}

/**
 * A hosted file's download on the api surface (`GET /api/downloads/:id/*path`): the server answers
 * a redirect to a short-lived signed URL, which the browser follows and saves. A browser download
 * is not attested (no completion call), so it never counts as a pull; `svc download` does that.
 */
export const fileDownloadUrl = (apiUrl: string, artifactId: string, path: string) =>
  `${apiUrl}/api/downloads/${encodeURIComponent(artifactId)}/${path.split('/').map(encodeURIComponent).join('/')}`;
