import { checkImportLines } from './import-checks.ts';
import { hostFiles, type HostingOptions } from './import-hosted-files.ts';
import type { ImportIssue, ImportRecord, NumberedLine, ParsedLine } from './import-records.ts';
import {
  settleLatestRevisions,
  upsertArtifact,
  upsertFile,
  upsertReview,
  upsertRunner,
  upsertTrustBundle,
  upsertVersion,
  type UpsertOutcome,
} from './import-upserts.ts';

export type { ImportIssue } from './import-records.ts';

/** Validation or consistency problems, each naming its line; nothing was imported. */
export class CatalogImportError extends Error {
  readonly issues: ImportIssue[];
  constructor(issues: ImportIssue[]) {
    super(`Catalog import refused, nothing imported:\n${issues.map((issue) => `  line ${issue.line}: ${issue.message}`).join('\n')}`);
    this.name = 'CatalogImportError';
    this.issues = issues;
  }
}

type Counts = Record<UpsertOutcome, number>;
export interface ImportResult {
  artifacts: Counts;
  versions: Counts;
  files: Counts;
  trustBundles: Counts;
  reviews: Counts;
  hostedBytes: number;
}

/** Parses JSONL text into numbered lines; blank lines and `#` comments are skipped; bad JSON is kept as an issue. */
export function parseJsonLines(text: string): NumberedLine[] {
  const out: NumberedLine[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const trimmed = raw.trim();
    if (!trimmed || trimmed.startsWith('#')) return;
    try {
      out.push({ line: index + 1, value: JSON.parse(trimmed) });
    } catch (error) {
      out.push({ line: index + 1, value: undefined, invalidJson: (error as Error).message });
    }
  });
  return out;
}

const zero = (): Counts => ({ created: 0, updated: 0, unchanged: 0 });

function linesOfKind<Kind extends ImportRecord['kind']>(parsed: ParsedLine[], kind: Kind) {
  return parsed.filter((entry): entry is { line: number; record: Extract<ImportRecord, { kind: Kind }> } => entry.record.kind === kind);
}

/**
 * Idempotent upsert of catalog records (artifact, version, file, trust-bundle, review lines).
 * Everything is validated first and every problem is reported with its line; then hosted bytes
 * go to the object store (skipped when the same digest is already there) and the rows are
 * written in one transaction, each kind after the kinds it refers to. Running the same file
 * twice changes nothing the second time.
 */
export async function importCatalog(options: HostingOptions, lines: NumberedLine[]): Promise<ImportResult> {
  const { sequelize } = options;
  const checked = await checkImportLines(sequelize, lines);
  if (checked.issues.length) throw new CatalogImportError(checked.issues);
  const { parsed } = checked;
  const { hosted, hostedBytes, issues } = await hostFiles(options, parsed);
  if (issues.length) throw new CatalogImportError(issues);

  const result: ImportResult = { artifacts: zero(), versions: zero(), files: zero(), trustBundles: zero(), reviews: zero(), hostedBytes };
  await sequelize.transaction(async (transaction) => {
    const runUpsert = upsertRunner(sequelize, transaction);
    for (const { record } of linesOfKind(parsed, 'artifact')) result.artifacts[await upsertArtifact(runUpsert, record)]++;
    for (const { record } of linesOfKind(parsed, 'version')) result.versions[await upsertVersion(runUpsert, record)]++;
    for (const { line, record } of linesOfKind(parsed, 'file')) result.files[await upsertFile(runUpsert, record, hosted.get(line))]++;
    for (const { record } of linesOfKind(parsed, 'trust-bundle')) result.trustBundles[await upsertTrustBundle(runUpsert, record)]++;
    for (const { record } of linesOfKind(parsed, 'review')) result.reviews[await upsertReview(runUpsert, record)]++;
    const touched = new Set([
      ...linesOfKind(parsed, 'artifact').map(({ record }) => record.id),
      ...linesOfKind(parsed, 'version').map(({ record }) => record.artifactId),
    ]);
    await settleLatestRevisions(sequelize, transaction, [...touched]);
  });
  return result;
}
