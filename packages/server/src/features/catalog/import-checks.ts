import { QueryTypes, type Sequelize } from 'sequelize';
import { ImportRecord, type ImportIssue, type NumberedLine, type ParsedLine } from './import-records.ts';

/**
 * Validates every line and checks that it can be written: each record appears once, and what it
 * refers to (an artifact, a version, a latest revision) is in the file or already in the catalog.
 * Every problem is collected with its line, so one run reports them all.
 */
export async function checkImportLines(sequelize: Sequelize, lines: NumberedLine[]): Promise<{ parsed: ParsedLine[]; issues: ImportIssue[] }> {
  const issues: ImportIssue[] = [];
  const parsed: ParsedLine[] = [];
  for (const { line, value, invalidJson } of lines) {
    if (invalidJson !== undefined) {
      issues.push({ line, message: `not valid JSON (${invalidJson})` });
      continue;
    }
    const result = ImportRecord.safeParse(value);
    if (result.success) parsed.push({ line, record: result.data });
    else for (const issue of result.error.issues) issues.push({ line, message: `${issue.path.length ? `${issue.path.join('.')}: ` : ''}${issue.message}` });
  }
  issues.push(...(await referenceIssues(sequelize, parsed)));
  return { parsed, issues };
}

/** Where a record is identified by what it belongs to, the identity spells that out. */
function identityOf(record: ImportRecord): string {
  if (record.kind === 'artifact') return record.id;
  if (record.kind === 'version') return `${record.artifactId}@${record.revision}`;
  if (record.kind === 'file') return `${record.artifactId}@${record.revision}/${record.path}`;
  return record.id;
}

/** Duplicates within the file, and references that resolve neither within the file nor to rows already in the catalog. */
async function referenceIssues(sequelize: Sequelize, parsed: ParsedLine[]): Promise<ImportIssue[]> {
  const issues: ImportIssue[] = [];
  const known = await sequelize.query<{ id: string }>('SELECT id FROM catalog_artifacts', { type: QueryTypes.SELECT });
  const knownVersions = await sequelize.query<{ artifact_id: string; revision: string }>('SELECT artifact_id, revision FROM catalog_versions', {
    type: QueryTypes.SELECT,
  });
  const artifacts = new Set(known.map((row) => row.id));
  const versions = new Set(knownVersions.map((row) => `${row.artifact_id}@${row.revision}`));
  for (const { record } of parsed) {
    if (record.kind === 'artifact') artifacts.add(record.id);
    if (record.kind === 'version') versions.add(`${record.artifactId}@${record.revision}`);
  }
  const seen = new Map<string, number>();
  for (const { line, record } of parsed) {
    const identity = identityOf(record);
    const key = `${record.kind}:${identity}`;
    if (seen.has(key)) issues.push({ line, message: `duplicate ${record.kind} ${identity} (first on line ${seen.get(key)})` });
    seen.set(key, line);
    if (record.kind !== 'artifact' && !artifacts.has(record.artifactId))
      issues.push({ line, message: `unknown artifact "${record.artifactId}": add an artifact line first` });
    if (
      (record.kind === 'file' || record.kind === 'trust-bundle') &&
      artifacts.has(record.artifactId) &&
      !versions.has(`${record.artifactId}@${record.revision}`)
    ) {
      issues.push({ line, message: `unknown version ${record.artifactId}@${record.revision}: add a version line first` });
    }
    if (record.kind === 'artifact' && record.latestRevision && !versions.has(`${record.id}@${record.latestRevision}`))
      issues.push({ line, message: `latestRevision ${record.latestRevision} has no version line` });
  }
  return issues;
}
