import { QueryTypes, type Sequelize } from 'sequelize';
import type { ReceiptRecord, RecordLoader } from '../receipts/index.ts';

export const DOWNLOAD_COMPLETION = 'download-completion';

/** The pull record as the completion answer (and the stored row) state it. */
export interface PullRecord {
  recordId: string;
  artifactId: string;
  revision: string;
  path: string;
  sha256: string;
  sizeBytes: number;
  recordedAt: string | Date;
}

/**
 * What a download-completion receipt attests, built from the pull record alone, so a retried
 * completion that answers the first record answers the same receipt. The caller's key is left
 * out: it identifies the caller, and a receipt may be shown in public.
 */
export function downloadCompletionRecord(pull: PullRecord): ReceiptRecord {
  const recordedAt = new Date(pull.recordedAt);
  return {
    kind: DOWNLOAD_COMPLETION,
    recordId: pull.recordId,
    recordedAt,
    facts: {
      artifact_id: pull.artifactId,
      revision: pull.revision,
      path: pull.path,
      sha256: pull.sha256,
      size_bytes: pull.sizeBytes,
      recorded_at: recordedAt.toISOString(),
    },
  };
}

export function downloadCompletionLoader(sequelize: Sequelize): RecordLoader {
  return async (recordId) => {
    if (!/^\d{1,18}$/.test(recordId)) return undefined;
    const [row] = await sequelize.query<{
      id: string;
      artifact_id: string;
      revision: string;
      path: string;
      sha256: string;
      size_bytes: string;
      created_at: Date;
    }>('SELECT id, artifact_id, revision, path, sha256, size_bytes, created_at FROM catalog_pulls WHERE id = :id', {
      replacements: { id: recordId },
      type: QueryTypes.SELECT,
    });
    if (!row) return undefined;
    return downloadCompletionRecord({
      recordId: String(row.id),
      artifactId: row.artifact_id,
      revision: row.revision,
      path: row.path,
      sha256: row.sha256,
      sizeBytes: Number(row.size_bytes),
      recordedAt: row.created_at,
    });
  };
}
