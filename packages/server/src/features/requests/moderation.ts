import { QueryTypes, type Transaction } from 'sequelize';
import { catalogRequestTransitions, type CatalogRequestReceiptResponse, type CatalogRequestStatus } from '@svc/schemas';
import { ServiceError } from '../../service-error.ts';
import { REQUEST_COLUMNS, type RequestRow } from './request-rows.ts';
import { notFound, type RequestStore } from './request-store.ts';
import { screenRequestText } from './screen-request.ts';

export interface Moderation {
  status: Exclude<CatalogRequestStatus, 'submitted'>;
  note?: string;
  duplicate_of?: string;
  fulfilled_by?: string;
}

const refuseTransition = (from: CatalogRequestStatus, to: CatalogRequestStatus) => {
  const allowed = catalogRequestTransitions[from];
  return new ServiceError(
    'request_transition_refused',
    `A ${from} request cannot become ${to}; from ${from} it may become ${allowed.length > 0 ? allowed.join(', ') : 'nothing (it is final)'}.`,
  );
};

/**
 * Sets a request's status (operator only; the contract checks that). One transaction locks the
 * request (and the original of a duplicate, in id order so two crossing moderations cannot
 * deadlock), checks the transition, updates the row and appends one history entry. Repeating
 * the current state exactly is a replay: it appends nothing.
 */
export async function moderateRequest(store: RequestStore, id: string, moderation: Moderation): Promise<CatalogRequestReceiptResponse> {
  if (moderation.note !== undefined) screenRequestText(moderation.note);
  const { sequelize } = store;
  return sequelize.transaction(async (transaction) => {
    const locked = await sequelize.query<RequestRow>(`SELECT ${REQUEST_COLUMNS} FROM catalog_requests WHERE id IN (:ids) ORDER BY id FOR UPDATE`, {
      replacements: { ids: [id, moderation.duplicate_of ?? id] },
      type: QueryTypes.SELECT,
      transaction,
    });
    const row = locked.find((candidate) => candidate.id === id);
    if (!row) throw notFound(id);
    const to = moderation.status;
    const note = moderation.note ?? null;
    const duplicateOf =
      to === 'duplicate'
        ? checkOriginal(
            row,
            locked.find((candidate) => candidate.id === moderation.duplicate_of),
            moderation.duplicate_of!,
          )
        : null;
    const fulfilledBy = to === 'fulfilled' ? await fulfilledArtifact(store, row, moderation.fulfilled_by, transaction) : null;
    if (to === row.status) {
      if (note === row.note && duplicateOf === row.duplicate_of && fulfilledBy === row.fulfilled_by) return store.receiptOf(row, transaction);
    } else if (!catalogRequestTransitions[row.status].includes(to)) {
      throw refuseTransition(row.status, to);
    }
    if (to === 'duplicate') await refuseIfOriginal(store, row.id, transaction);
    const [updated] = await sequelize.query<RequestRow>(
      `UPDATE catalog_requests SET status = :to, note = :note, duplicate_of = :duplicateOf, fulfilled_by = :fulfilledBy, updated_at = date_trunc('milliseconds', clock_timestamp())
       WHERE id = :id RETURNING ${REQUEST_COLUMNS}`,
      { replacements: { id, to, note, duplicateOf, fulfilledBy }, type: QueryTypes.SELECT, transaction },
    );
    await sequelize.query(
      `INSERT INTO catalog_request_events (request_id, at, actor, status, previous_status, note, duplicate_of, fulfilled_by)
       VALUES (:id, :at, 'operator', :to, :from, :note, :duplicateOf, :fulfilledBy)`,
      { replacements: { id, at: updated!.updated_at, to, from: row.status, note, duplicateOf, fulfilledBy }, type: QueryTypes.INSERT, transaction },
    );
    return store.receiptOf(updated!, transaction);
  });
}

/** The original of a duplicate: another request of the same kind that is not itself a duplicate. */
function checkOriginal(row: RequestRow, original: RequestRow | undefined, originalId: string): string {
  const invalid = (why: string) => new ServiceError('request_duplicate_target_invalid', `duplicate_of ${originalId}: ${why}`);
  if (originalId === row.id) throw invalid('a request cannot duplicate itself.');
  if (!original) throw invalid('no such request.');
  if (original.kind !== row.kind) throw invalid(`it is a ${original.kind} request and this one is a ${row.kind} request.`);
  if (original.status === 'duplicate') throw invalid(`it is itself a duplicate of ${original.duplicate_of}; point at that one.`);
  return original.id;
}

/**
 * A request others point at as their original cannot become a duplicate itself: their asks
 * would be carried by a request that no longer carries anything.
 */
async function refuseIfOriginal(store: RequestStore, id: string, transaction: Transaction): Promise<void> {
  const [pointer] = await store.sequelize.query<{ id: string }>("SELECT id FROM catalog_requests WHERE duplicate_of = :id AND status = 'duplicate' LIMIT 1", {
    replacements: { id },
    type: QueryTypes.SELECT,
    transaction,
  });
  if (pointer)
    throw new ServiceError(
      'request_has_duplicates',
      `${id} is the original of duplicate ${pointer.id}; it cannot become a duplicate itself. Mark ${pointer.id} under_review first or choose it as the original.`,
    );
}

/** The artifact that fulfils a request: the one named (it must exist), else the one a mirror or source request is about. */
async function fulfilledArtifact(store: RequestStore, row: RequestRow, named: string | undefined, transaction: Transaction): Promise<string | null> {
  if (named === undefined) {
    if (row.artifact_id !== null) return row.artifact_id;
    if (row.details.repo === undefined || row.details.source === undefined) return null;
    const [listed] = await store.sequelize.query<{ id: string }>('SELECT id FROM catalog_artifacts WHERE source = :source AND lower(repo) = lower(:repo)', {
      replacements: { source: row.details.source, repo: row.details.repo },
      type: QueryTypes.SELECT,
      transaction,
    });
    return listed?.id ?? null;
  }
  const [artifact] = await store.sequelize.query<{ id: string }>('SELECT id FROM catalog_artifacts WHERE id = :id', {
    replacements: { id: named },
    type: QueryTypes.SELECT,
    transaction,
  });
  if (!artifact) throw new ServiceError('request_artifact_unknown', `fulfilled_by: no catalog artifact "${named}".`);
  return artifact.id;
}
