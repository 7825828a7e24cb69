import { randomBytes } from 'node:crypto';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type {
  CatalogRequestChannel,
  CatalogRequestKind,
  CatalogRequestReceiptResponse,
  CatalogRequestStatus,
  CatalogRequestStatusListResponse,
  Principal,
} from '@svc/schemas';
import { consumeWindow } from '../../db/rate-counters.ts';
import { keysetPage, NEWEST_FIRST, listAnswer } from '../../db/keyset-page.ts';
import type { RowScope } from '../../http/everyone-view.ts';
import { ServiceError } from '../../service-error.ts';
import { principalKey } from '../identity/index.ts';
import { artifactSubject, repoSubject, requestFingerprint, storedDetails, type CatalogRequestBody } from './normalise.ts';
import { REQUEST_COLUMNS, toReceipt, toSummary, type EventRow, type RequestRow } from './request-rows.ts';
import { screenRequestText } from './screen-request.ts';
import type { RequestsConfig } from './requests-config.ts';

/** Who reads: the operator reads every request; anyone else only the requests filed under its key. */
export interface RequestViewer {
  requester: string;
  operator: boolean;
}

export interface FiledRequest {
  receipt: CatalogRequestReceiptResponse;
  /** True when this requester had already filed exactly this request: nothing was created. */
  replayed: boolean;
}

export interface ListQuery {
  kind?: CatalogRequestKind;
  status?: CatalogRequestStatus;
  limit: number;
  cursor?: string;
}

/** Thrown inside the filing transaction to roll it back (and its counter increments) on a lost race. */
class LostReplayRace extends Error {}

const HOUR = 3600;
const DAY = 86_400;

export const newRequestId = () => `brr_${randomBytes(16).toString('base64url')}`;

/**
 * The one store of catalog requests. Every way of filing (the /v1 routes, the api surface's
 * mirror and source requests, request_specialist) goes through `file`, so replays, screening
 * and limits behave the same everywhere.
 */
export class RequestStore {
  readonly sequelize: Sequelize;
  readonly #settings: RequestsConfig;
  readonly #baseUrl: () => string;

  constructor(sequelize: Sequelize, settings: RequestsConfig, baseUrl: () => string) {
    this.sequelize = sequelize;
    this.#settings = settings;
    this.#baseUrl = baseUrl;
  }

  /**
   * Files a request for `requester` (see `principalKey` and the catalog's `callerKey`), or finds
   * the one it already filed with the same kind and normalised body. Screening refuses
   * credential-shaped text before anything is stored; only new requests count against limits.
   */
  async file(requester: string, kind: CatalogRequestKind, body: CatalogRequestBody, via: CatalogRequestChannel): Promise<FiledRequest> {
    const details = storedDetails(body);
    const screening = screenRequestText(details);
    const fingerprint = requestFingerprint(kind, details);
    const existing = await this.#findReplay(requester, kind, fingerprint);
    if (existing) return existing;
    const { subject, artifactId } = await this.#subjectOf(kind, details);
    try {
      return await this.sequelize.transaction(async (transaction) => {
        await this.#admit(requester, transaction);
        const now = await this.#now(transaction);
        const [row] = await this.sequelize.query<RequestRow>(
          `INSERT INTO catalog_requests (id, kind, requester, fingerprint, details, subject, artifact_id, screening, submitted_via, created_at, updated_at)
           VALUES (:id, :kind, :requester, :fingerprint, :details::jsonb, :subject, :artifactId, :screening::jsonb, :via, :now, :now)
           ON CONFLICT (requester, kind, fingerprint) DO NOTHING
           RETURNING ${REQUEST_COLUMNS}`,
          {
            replacements: {
              id: newRequestId(),
              kind,
              requester,
              fingerprint,
              details: JSON.stringify(details),
              subject,
              artifactId,
              screening: JSON.stringify(screening),
              via,
              now,
            },
            type: QueryTypes.SELECT,
            transaction,
          },
        );
        if (!row) throw new LostReplayRace();
        const [event] = await this.sequelize.query<EventRow>(
          `INSERT INTO catalog_request_events (request_id, at, actor, status) VALUES (:id, :now, 'submitter', 'submitted')
           RETURNING request_id, at, actor, status, previous_status, note, duplicate_of, fulfilled_by`,
          { replacements: { id: row.id, now }, type: QueryTypes.SELECT, transaction },
        );
        return { receipt: toReceipt(row, [event!], this.#baseUrl()), replayed: false };
      });
    } catch (error) {
      // Another submission of the same request committed first (or this one was refused by a
      // limit while its twin got in): answer that one, as a replay.
      if (error instanceof LostReplayRace || (error instanceof ServiceError && error.code === 'request_rate_limited')) {
        const replay = await this.#findReplay(requester, kind, fingerprint);
        if (replay) return replay;
      }
      throw error;
    }
  }

  /** `file` for a principal: what request_specialist calls to file a feature request on a caller's behalf. */
  fileFor(
    principal: Pick<Principal, 'kind' | 'id'>,
    kind: CatalogRequestKind,
    body: CatalogRequestBody,
    via: CatalogRequestChannel = 'request_specialist',
  ): Promise<FiledRequest> {
    return this.file(principalKey(principal), kind, body, via);
  }

  /** A request with its history; another requester's is `request_not_found`, as if it did not exist. */
  async receipt(id: string, viewer: RequestViewer, transaction?: Transaction): Promise<CatalogRequestReceiptResponse> {
    const row = await this.row(id, transaction);
    if (!row || (!viewer.operator && row.requester !== viewer.requester)) throw notFound(id);
    return this.receiptOf(row, transaction);
  }

  async row(id: string, transaction?: Transaction, lock = false): Promise<RequestRow | undefined> {
    const [row] = await this.sequelize.query<RequestRow>(`SELECT ${REQUEST_COLUMNS} FROM catalog_requests WHERE id = :id${lock ? ' FOR UPDATE' : ''}`, {
      replacements: { id },
      type: QueryTypes.SELECT,
      transaction,
    });
    return row;
  }

  async receiptOf(row: RequestRow, transaction?: Transaction): Promise<CatalogRequestReceiptResponse> {
    const events = await this.sequelize.query<EventRow>(
      'SELECT request_id, at, actor, status, previous_status, note, duplicate_of, fulfilled_by FROM catalog_request_events WHERE request_id = :id ORDER BY seq',
      { replacements: { id: row.id }, type: QueryTypes.SELECT, transaction },
    );
    return toReceipt(row, events, this.#baseUrl());
  }

  /** The requests in scope (the caller's, or everyone's in the operator view), newest first, by keyset cursor. */
  async list(rows: RowScope, query: ListQuery): Promise<CatalogRequestStatusListResponse> {
    const page = await keysetPage<RequestRow>(
      this.sequelize,
      {
        select: REQUEST_COLUMNS,
        from: 'catalog_requests',
        where: [!rows.everyone && 'requester = :requester', query.kind && 'kind = :kind', query.status && 'status = :status'],
        replacements: { requester: rows.everyone ? null : principalKey(rows.principal), kind: query.kind ?? null, status: query.status ?? null },
        keys: NEWEST_FIRST,
      },
      query,
    );
    const baseUrl = this.#baseUrl();
    return listAnswer(
      page,
      page.rows.map((row) => toSummary(row, baseUrl)),
    );
  }

  /** Millisecond timestamps: the precision every answer shows (lists page by the microsecond anyway). */
  async #now(transaction: Transaction): Promise<Date> {
    const [row] = await this.sequelize.query<{ now: Date }>("SELECT date_trunc('milliseconds', clock_timestamp()) AS now", {
      type: QueryTypes.SELECT,
      transaction,
    });
    return row!.now;
  }

  async #findReplay(requester: string, kind: CatalogRequestKind, fingerprint: string): Promise<FiledRequest | undefined> {
    const [row] = await this.sequelize.query<RequestRow>(
      `SELECT ${REQUEST_COLUMNS} FROM catalog_requests WHERE requester = :requester AND kind = :kind AND fingerprint = :fingerprint`,
      {
        replacements: { requester, kind, fingerprint },
        type: QueryTypes.SELECT,
      },
    );
    return row ? { receipt: await this.receiptOf(row), replayed: true } : undefined;
  }

  /** Counts one new request in the requester's hour and day windows, in the filing transaction. */
  async #admit(requester: string, transaction: Transaction): Promise<void> {
    const windows = [
      { bucket: `requests:hour:${requester}`, windowSeconds: HOUR, maxHits: this.#settings.perHour, label: `${this.#settings.perHour} new requests an hour` },
      { bucket: `requests:day:${requester}`, windowSeconds: DAY, maxHits: this.#settings.perDay, label: `${this.#settings.perDay} new requests a day` },
    ];
    for (const { label, ...limit } of windows) {
      const decision = await consumeWindow(this.sequelize, limit, { transaction });
      if (!decision.allowed) {
        throw new ServiceError(
          'request_rate_limited',
          `Catalog request limit reached: ${label} per principal. Replays of requests already filed still answer.`,
          { retryAfterSeconds: decision.retryAfterSeconds, retryable: true },
        );
      }
    }
  }

  /** The radar's subject and the catalog artifact a mirror or source request is about, when the catalog knows it. */
  async #subjectOf(kind: CatalogRequestKind, details: CatalogRequestBody): Promise<{ subject: string | null; artifactId: string | null }> {
    if (kind === 'feature') return { subject: null, artifactId: null };
    if (details.artifact_id !== undefined) {
      const [artifact] = await this.sequelize.query<{ id: string }>('SELECT id FROM catalog_artifacts WHERE id = :id', {
        replacements: { id: details.artifact_id },
        type: QueryTypes.SELECT,
      });
      if (!artifact)
        throw new ServiceError(
          'request_artifact_unknown',
          `No catalog artifact "${details.artifact_id}"; to ask for an upstream repository, send repo and source instead.`,
        );
      return { subject: artifactSubject(artifact.id), artifactId: artifact.id };
    }
    const repo = details.repo!;
    const source = details.source!;
    const [artifact] = await this.sequelize.query<{ id: string }>('SELECT id FROM catalog_artifacts WHERE source = :source AND lower(repo) = lower(:repo)', {
      replacements: { source, repo },
      type: QueryTypes.SELECT,
    });
    // A mirror of a repository the catalog lists is a mirror of that artifact; a source request stays about the repository.
    if (kind === 'mirror' && artifact) return { subject: artifactSubject(artifact.id), artifactId: artifact.id };
    return { subject: repoSubject(source, repo), artifactId: artifact?.id ?? null };
  }
}

export const notFound = (id: string) => new ServiceError('request_not_found', `No catalog request ${id} among yours.`);
