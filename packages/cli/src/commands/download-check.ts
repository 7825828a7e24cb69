import type { CheckArtifactOptions, CheckedFile } from '@svc/client';
import type { CliContext } from '../context.ts';
import { CliFailure } from '../failure.ts';

/** One file's line of `svc download --check`: what is wrong with it, in the user's words. */
export function checkLine(file: CheckedFile): string {
  switch (file.state) {
    case 'up-to-date':
      return `${file.path}: up to date`;
    case 'missing':
      return `${file.path}: missing`;
    case 'not-in-plan':
      return `${file.path}: not in the download plan`;
    case 'differs':
      return file.actual.sizeBytes !== file.expected.sizeBytes
        ? `${file.path}: size differs from the catalog (${file.actual.sizeBytes} bytes, the catalog says ${file.expected.sizeBytes})`
        : `${file.path}: sha256 differs from the catalog`;
  }
}

/**
 * `svc download <artifact> --check`: the local files against the catalog's plan, nothing
 * fetched. A line per file (or the result as data with `--json`); exit 1 when any file is
 * missing or differs.
 */
export async function checkDownload(
  cli: CliContext,
  options: { artifactId: string; destination: string; paths: string[]; tool: CheckArtifactOptions['tool'] },
): Promise<void> {
  const result = await cli.client().catalog.checkArtifact({
    artifactId: options.artifactId,
    destination: options.destination,
    paths: options.paths.length ? options.paths : undefined,
    tool: options.tool,
  });
  cli.output.result(result, (r) =>
    [
      ...r.files.map(checkLine),
      `${r.artifactId} revision ${r.revision}: ${r.files.filter((file) => file.state === 'up-to-date').length} of ${r.files.length} up to date`,
    ].join('\n'),
  );
  const bad = result.files.filter((file) => file.state !== 'up-to-date').length;
  if (bad > 0) throw new CliFailure(`${bad} file(s) missing or different from the catalog`, { silent: cli.output.json });
}
