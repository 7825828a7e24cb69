import {
  pathFor,
  requestsContract,
  type CatalogRequestChannel,
  type CatalogRequestDetails,
  type CatalogRequestHistoryEntry,
  type CatalogRequestKind,
  type CatalogRequestReceiptResponse,
  type CatalogRequestStatus,
  type CatalogRequestSummary,
} from '@svc/schemas';

/** A row of `catalog_requests` as the queries select it. */
export interface RequestRow {
  id: string;
  kind: CatalogRequestKind;
  requester: string;
  details: CatalogRequestDetails;
  subject: string | null;
  artifact_id: string | null;
  status: CatalogRequestStatus;
  note: string | null;
  duplicate_of: string | null;
  fulfilled_by: string | null;
  screening: { action: 'allow' | 'escalate'; findings: string[] };
  submitted_via: CatalogRequestChannel;
  created_at: Date | string;
  updated_at: Date | string;
}

export interface EventRow {
  request_id: string;
  at: Date | string;
  actor: 'submitter' | 'operator';
  status: CatalogRequestStatus;
  previous_status: CatalogRequestStatus | null;
  note: string | null;
  duplicate_of: string | null;
  fulfilled_by: string | null;
}

export const REQUEST_COLUMNS =
  'id, kind, requester, details, subject, artifact_id, status, note, duplicate_of, fulfilled_by, screening, submitted_via, created_at, updated_at';

export const iso = (value: Date | string) => new Date(value).toISOString();

export function toSummary(row: RequestRow, baseUrl: string): CatalogRequestSummary {
  return {
    request_id: row.id,
    kind: row.kind,
    status: row.status,
    note: row.note,
    details: row.details,
    artifact_id: row.artifact_id,
    duplicate_of: row.duplicate_of,
    fulfilled_by: row.fulfilled_by,
    screening: row.screening,
    submitted_via: row.submitted_via,
    requester: row.requester,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    status_url: `${baseUrl}${pathFor(requestsContract.receipt, { request_id: row.id })}`,
  };
}

export function toHistoryEntry(row: EventRow): CatalogRequestHistoryEntry {
  return {
    at: iso(row.at),
    status: row.status,
    previous_status: row.previous_status,
    actor: row.actor,
    note: row.note,
    duplicate_of: row.duplicate_of,
    fulfilled_by: row.fulfilled_by,
  };
}

export function toReceipt(row: RequestRow, events: EventRow[], baseUrl: string): CatalogRequestReceiptResponse {
  return { ...toSummary(row, baseUrl), history: events.map(toHistoryEntry) };
}
