import { createHash, randomBytes } from 'node:crypto';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { CompletionResponse } from '@svc/schemas';
import { ServiceError } from '../../service-error.ts';
import type { ObjectStore } from '../../storage/object-store.ts';
import type { CatalogService } from './catalog-service.ts';
import { iso, type FileRow } from './rows.ts';

/** One caller's repeated pull of the same bytes within this window counts once. */
const REPEAT_WINDOW = '1 day';

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

export interface DownloadOptions {
  sequelize: Sequelize;
  catalog: CatalogService;
  store: ObjectStore;
  urlTtlSeconds: number;
  tokenTtlSeconds: number;
}

/**
 * The download flow: a redirect is only an initiation (a signed URL and a single-use token
 * bound to the artifact, path, planned digest and size); a pull is recorded only by a
 * completion carrying that token and the matching digest.
 */
export class Downloads {
  private readonly options: DownloadOptions;
  /** Housekeeping only: when this process last removed long-expired tokens. */
  private lastPurge = 0;

  constructor(options: DownloadOptions) {
    this.options = options;
  }

  private async hostedFile(artifactId: string, path: string): Promise<FileRow> {
    const revision = (await this.options.catalog.summary(artifactId)).latestRevision;
    const [file] = await this.options.sequelize.query<FileRow>(
      `SELECT * FROM catalog_files WHERE artifact_id = :artifactId AND revision = :revision AND path = :path`,
      {
        replacements: { artifactId, revision, path },
        type: QueryTypes.SELECT,
      },
    );
    if (!file)
      throw new ServiceError('file_not_found', `Artifact "${artifactId}" has no file "${path}" in its latest revision${revision ? ` (${revision})` : ''}.`);
    if (!file.hosted || !file.object_key || !file.object_generation)
      throw new ServiceError(
        'file_not_hosted',
        `"${path}" of "${artifactId}" is not hosted here; ask for a mirror with POST /api/artifacts/${artifactId}/mirror-request.`,
      );
    return file;
  }

  /**
   * What a HEAD answers: the same checks and signed URL as a start, but no completion token, so
   * a probe leaves nothing behind and cannot be attested.
   */
  async probe(artifactId: string, path: string): Promise<{ location: string; file: FileRow }> {
    const file = await this.hostedFile(artifactId, path);
    return { location: await this.signedUrl(file), file };
  }

  private signedUrl(file: FileRow): Promise<string> {
    return this.options.store.signedReadUrl(file.object_key!, { generation: file.object_generation!, expiresInSeconds: this.options.urlTtlSeconds });
  }

  /** Answers the signed URL and a fresh completion token (only its hash is stored). */
  async start(artifactId: string, path: string, callerKey: string): Promise<{ location: string; token: string; file: FileRow }> {
    const file = await this.hostedFile(artifactId, path);
    const token = `sct_${randomBytes(32).toString('base64url')}`;
    await this.options.sequelize.query(
      `INSERT INTO catalog_completion_tokens (token_hash, artifact_id, revision, path, sha256, size_bytes, caller_key, expires_at)
       VALUES (:hash, :artifactId, :revision, :path, :sha256, :sizeBytes, :callerKey, now() + make_interval(secs => :ttl))`,
      {
        replacements: {
          hash: hashToken(token),
          artifactId,
          revision: file.revision,
          path,
          sha256: file.sha256,
          sizeBytes: Number(file.size_bytes),
          callerKey,
          ttl: this.options.tokenTtlSeconds,
        },
      },
    );
    await this.purgeExpiredTokens();
    return { location: await this.signedUrl(file), token, file };
  }

  /** Tokens a day past their expiry can no longer be answered with anything but "unknown"; drop them at most once a minute. */
  private async purgeExpiredTokens(): Promise<void> {
    if (Date.now() - this.lastPurge < 60_000) return;
    this.lastPurge = Date.now();
    await this.options.sequelize.query(`DELETE FROM catalog_completion_tokens WHERE expires_at < now() - interval '1 day'`);
  }

  /**
   * Records the completion in one transaction: token known, for this artifact and path, not
   * spent, not expired, digest and size equal to the plan; then the token is spent and one pull
   * recorded (or none when this caller already recorded the same bytes). Any refusal rolls
   * back, so nothing is recorded. The same token with the same bytes again (a retry whose answer
   * was lost) answers `already-recorded` with the first record; the row lock makes concurrent
   * retries wait for the first and count nothing.
   */
  async complete(
    artifactId: string,
    path: string,
    body: { sha256: string; sizeBytes: number; completionToken: string },
  ): Promise<Omit<CompletionResponse, 'receipt'>> {
    const sha256 = body.sha256.toLowerCase().replace(/^sha256:/, '');
    const { sequelize } = this.options;
    return sequelize.transaction(async (transaction) => {
      const [token] = await sequelize.query<{
        artifact_id: string;
        revision: string;
        path: string;
        sha256: string;
        size_bytes: string;
        caller_key: string;
        spent_at: Date | null;
        recorded_at: Date | null;
        recorded_pull_id: string | null;
        expired: boolean;
      }>(
        `SELECT artifact_id, revision, path, sha256, size_bytes, caller_key, spent_at, recorded_at, recorded_pull_id, expires_at < now() AS expired FROM catalog_completion_tokens WHERE token_hash = :hash FOR UPDATE`,
        { replacements: { hash: hashToken(body.completionToken) }, type: QueryTypes.SELECT, transaction },
      );
      if (!token)
        throw new ServiceError(
          'completion_token_invalid',
          'Unknown completion token: use the X-Svc-Completion-Token of the redirect that started this download.',
        );
      if (token.artifact_id !== artifactId || token.path !== path) {
        throw new ServiceError(
          'completion_token_foreign',
          `This completion token was issued for ${token.artifact_id}/${token.path}, not ${artifactId}/${path}.`,
        );
      }
      const sameBytes = token.sha256 === sha256 && Number(token.size_bytes) === body.sizeBytes;
      // What every recorded answer says about the bytes; the record's status and time follow.
      const attested = { localHashAttested: true, artifactId, revision: token.revision, path, sha256, sizeBytes: body.sizeBytes } as const;
      if (token.spent_at) {
        // The same attestation again is a retry whose answer was lost: answer the first record
        // and count nothing. Other bytes under a spent token stay refused.
        if (sameBytes) {
          const recordId = token.recorded_pull_id ?? (await this.latestPullId(token.caller_key, artifactId, path, sha256, transaction));
          return { ...attested, status: 'already-recorded', recordedAt: iso(token.recorded_at ?? token.spent_at), recordId };
        }
        throw new ServiceError(
          'completion_token_spent',
          `This completion token was already used at ${iso(token.spent_at)} for other bytes; start a new download for a new one.`,
        );
      }
      if (token.expired) throw new ServiceError('completion_token_expired', 'This completion token has expired; start a new download.');
      if (!sameBytes) {
        throw new ServiceError(
          'completion_digest_mismatch',
          `The attested bytes differ from the plan: expected sha256 ${token.sha256} and ${token.size_bytes} bytes, got sha256 ${sha256} and ${body.sizeBytes} bytes. Nothing was recorded.`,
        );
      }
      const [repeat] = await sequelize.query<{ id: string; created_at: Date }>(
        `SELECT id, created_at FROM catalog_pulls WHERE caller_key = :callerKey AND artifact_id = :artifactId AND path = :path AND sha256 = :sha256 AND created_at > now() - interval '${REPEAT_WINDOW}' ORDER BY created_at DESC LIMIT 1`,
        { replacements: { callerKey: token.caller_key, artifactId, path, sha256 }, type: QueryTypes.SELECT, transaction },
      );
      const status = repeat ? 'already-recorded' : 'client-attested';
      let record = repeat;
      if (!record) {
        const [pull] = await sequelize.query<{ id: string; created_at: Date }>(
          `INSERT INTO catalog_pulls (artifact_id, revision, path, sha256, size_bytes, caller_key) VALUES (:artifactId, :revision, :path, :sha256, :sizeBytes, :callerKey) RETURNING id, created_at`,
          {
            replacements: { artifactId, revision: token.revision, path, sha256, sizeBytes: body.sizeBytes, callerKey: token.caller_key },
            type: QueryTypes.SELECT,
            transaction,
          },
        );
        record = pull!;
      }
      // The token remembers its record, so a retry whose answer was lost gets the same record (and receipt) back.
      await sequelize.query(
        `UPDATE catalog_completion_tokens SET spent_at = now(), outcome = :status, recorded_at = :recordedAt, recorded_pull_id = :pullId WHERE token_hash = :hash`,
        {
          replacements: { status, recordedAt: record.created_at, pullId: String(record.id), hash: hashToken(body.completionToken) },
          transaction,
        },
      );
      return { ...attested, status, recordedAt: iso(record.created_at), recordId: String(record.id) };
    });
  }

  /** A token spent before it remembered its record: the caller's latest pull of these bytes is that record. */
  private async latestPullId(callerKey: string, artifactId: string, path: string, sha256: string, transaction: Transaction): Promise<string> {
    const [pull] = await this.options.sequelize.query<{ id: string }>(
      'SELECT id FROM catalog_pulls WHERE caller_key = :callerKey AND artifact_id = :artifactId AND path = :path AND sha256 = :sha256 ORDER BY created_at DESC LIMIT 1',
      { replacements: { callerKey, artifactId, path, sha256 }, type: QueryTypes.SELECT, transaction },
    );
    if (!pull) throw new ServiceError('completion_token_spent', 'This completion token was spent, and its record is gone; start a new download.');
    return String(pull.id);
  }
}
