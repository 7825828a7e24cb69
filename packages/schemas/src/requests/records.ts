import { z } from 'zod';
import { ArtifactId } from '../catalog/records.ts';
import { cursorList } from '../cursor-list.ts';
import { ArtifactSource } from '../catalog/values.ts';
import { CatalogRequestStatus } from './status.ts';

export { CatalogRequestStatus, catalogRequestStatuses } from './status.ts';

/** Spec (inference-billing section 2): `^brr_[A-Za-z0-9_-]{16,64}$`. */
export const CatalogRequestId = z
  .string()
  .regex(/^brr_[A-Za-z0-9_-]{16,64}$/, 'a catalog request id is `brr_` and 16..64 characters of A-Z a-z 0-9 _ -')
  .meta({ id: 'CatalogRequestId' });

export const catalogRequestKinds = ['feature', 'mirror', 'source'] as const;
export const CatalogRequestKind = z.enum(catalogRequestKinds).meta({ id: 'CatalogRequestKind' });
export type CatalogRequestKind = z.infer<typeof CatalogRequestKind>;

/**
 * Which status moderation may set from which. Setting the status a request already has is
 * always allowed: with the same note and references it is a replay and changes nothing, with
 * a different note it appends a note to the history.
 */
export const catalogRequestTransitions: Readonly<Record<CatalogRequestStatus, readonly CatalogRequestStatus[]>> = {
  submitted: ['under_review', 'accepted', 'rejected', 'duplicate', 'fulfilled'],
  under_review: ['accepted', 'rejected', 'duplicate', 'fulfilled'],
  accepted: ['under_review', 'rejected', 'fulfilled'],
  rejected: ['under_review'],
  duplicate: ['under_review'],
  fulfilled: [],
};

/** The radar leaves out what is settled; a duplicate counts under the request it duplicates. */
export const radarExcludedStatuses = ['rejected', 'fulfilled'] as const satisfies readonly CatalogRequestStatus[];

/** Where a request came in. */
export const catalogRequestChannels = ['v1', 'catalog_api', 'request_specialist'] as const;
export const CatalogRequestChannel = z.enum(catalogRequestChannels).meta({ id: 'CatalogRequestChannel' });
export type CatalogRequestChannel = z.infer<typeof CatalogRequestChannel>;

/** Request text: trimmed, 1..max characters, no NUL (PostgreSQL text cannot hold it). */
/** A high surrogate not followed by a low one, or a low one not after a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const requestText = (max: number) =>
  z
    .string()
    .trim()
    .min(1)
    .max(max)
    .regex(/^[^\u0000]*$/, 'the NUL character is not allowed')
    // A lone UTF-16 surrogate cannot be stored as JSON text (PostgreSQL refuses it): say so, as a 422.
    .refine((text) => !LONE_SURROGATE.test(text), 'a lone UTF-16 surrogate is not text');

export const requestTextLimits = { capability: 200, task: 100, useCase: 2000, targetTool: 64, repo: 300, note: 2000 } as const;

export const FeatureCatalogRequest = z
  .object({
    capability: requestText(requestTextLimits.capability).describe('What the catalog lacks, e.g. "a reranker for German legal text"'),
    task: requestText(requestTextLimits.task).describe('The task it serves, e.g. rerank, embeddings, toxicity'),
    use_case: requestText(requestTextLimits.useCase).describe('What you would do with it'),
    target_tool: requestText(requestTextLimits.targetTool).optional().describe('The runtime you would run it on'),
  })
  .strict()
  .meta({ id: 'FeatureCatalogRequest', description: 'Ask for a capability the catalog lacks. Unknown fields are refused.' });
export type FeatureCatalogRequest = z.input<typeof FeatureCatalogRequest>;

export const MirrorCatalogRequest = z
  .object({
    artifact_id: ArtifactId.optional().describe('A catalog artifact whose files should be hosted here'),
    repo: requestText(requestTextLimits.repo).optional().describe('Or an upstream repository to mirror (with `source`)'),
    source: ArtifactSource.optional(),
    use_case: requestText(requestTextLimits.useCase),
    target_tool: requestText(requestTextLimits.targetTool),
  })
  .strict()
  .superRefine((value, context) => {
    if ((value.artifact_id === undefined) === (value.repo === undefined))
      context.addIssue({ code: 'custom', path: ['artifact_id'], message: 'give exactly one of artifact_id or repo' });
    if (value.repo !== undefined && value.source === undefined)
      context.addIssue({ code: 'custom', path: ['source'], message: 'a repo needs its source (huggingface, github, ...)' });
    if (value.artifact_id !== undefined && value.source !== undefined)
      context.addIssue({ code: 'custom', path: ['source'], message: 'source goes with repo, not with artifact_id' });
  })
  .meta({
    id: 'MirrorCatalogRequest',
    description: 'Ask the operator to host the files of a catalog artifact, or of an upstream repository. Unknown fields are refused.',
  });
export type MirrorCatalogRequest = z.input<typeof MirrorCatalogRequest>;

export const SourceCatalogRequest = z
  .object({
    repo: requestText(requestTextLimits.repo).describe('Upstream repository, e.g. BAAI/bge-small-en-v1.5'),
    source: ArtifactSource,
    use_case: requestText(requestTextLimits.useCase),
    target_tool: requestText(requestTextLimits.targetTool),
  })
  .strict()
  .meta({ id: 'SourceCatalogRequest', description: 'Ask the operator to add an upstream repository to the catalog. Unknown fields are refused.' });
export type SourceCatalogRequest = z.input<typeof SourceCatalogRequest>;

/** What was asked, as stored (trimmed); the fields of the request's kind. */
export const CatalogRequestDetails = z
  .object({
    capability: z.string().optional(),
    task: z.string().optional(),
    artifact_id: ArtifactId.optional(),
    repo: z.string().optional(),
    source: ArtifactSource.optional(),
    use_case: z.string(),
    target_tool: z.string().optional(),
  })
  .meta({ id: 'CatalogRequestDetails' });
export type CatalogRequestDetails = z.infer<typeof CatalogRequestDetails>;

const timestamp = z.string().meta({ description: 'ISO 8601 timestamp (UTC)' });

/** One append-only entry of a request's history: the filing, then each moderation. */
export const CatalogRequestHistoryEntry = z
  .object({
    at: timestamp,
    status: CatalogRequestStatus,
    previous_status: CatalogRequestStatus.nullable(),
    actor: z.enum(['submitter', 'operator']),
    note: z.string().nullable(),
    duplicate_of: CatalogRequestId.nullable(),
    fulfilled_by: ArtifactId.nullable(),
  })
  .meta({ id: 'CatalogRequestHistoryEntry' });
export type CatalogRequestHistoryEntry = z.infer<typeof CatalogRequestHistoryEntry>;

/** What the screening saw in the request's text; credential-shaped text is refused, never stored. */
export const CatalogRequestScreening = z.object({ action: z.enum(['allow', 'escalate']), findings: z.array(z.string()) }).meta({
  id: 'CatalogRequestScreening',
  description: "Best-effort telemetry (the blackboard's screening): `escalate` marks prompt-injection phrasing for the operator.",
});

const receiptFields = {
  request_id: CatalogRequestId,
  kind: CatalogRequestKind,
  status: CatalogRequestStatus,
  note: z.string().nullable().describe('The latest moderation note'),
  details: CatalogRequestDetails,
  artifact_id: ArtifactId.nullable().describe('The catalog artifact the request is about, when known (a mirror, or a repo the catalog already lists)'),
  duplicate_of: CatalogRequestId.nullable(),
  fulfilled_by: ArtifactId.nullable(),
  screening: CatalogRequestScreening,
  submitted_via: CatalogRequestChannel,
  requester: z.string().describe('Who filed it: `principal:<kind>:<id>`, or a hashed bearer or address for anonymous catalog callers'),
  created_at: timestamp,
  updated_at: timestamp,
  status_url: z.string().describe('GET it for the current receipt'),
};

/** One request in a status list (the receipt without its history). */
export const CatalogRequestSummary = z.object(receiptFields).meta({ id: 'CatalogRequestSummary' });
export type CatalogRequestSummary = z.infer<typeof CatalogRequestSummary>;

export const CatalogRequestReceiptResponse = z
  .object({ ...receiptFields, history: z.array(CatalogRequestHistoryEntry).describe('Append-only, oldest first') })
  .meta({ id: 'CatalogRequestReceiptResponse' });
export type CatalogRequestReceiptResponse = z.infer<typeof CatalogRequestReceiptResponse>;

export const CatalogRequestSubmissionResponse = CatalogRequestReceiptResponse.extend({
  replayed: z.boolean().describe('true (with status 200) when this principal already filed exactly this request: nothing new was created'),
}).meta({ id: 'CatalogRequestSubmissionResponse' });
export type CatalogRequestSubmissionResponse = z.infer<typeof CatalogRequestSubmissionResponse>;

export const CatalogRequestStatusListResponse = cursorList(CatalogRequestSummary).meta({ id: 'CatalogRequestStatusListResponse' });
export type CatalogRequestStatusListResponse = z.infer<typeof CatalogRequestStatusListResponse>;

export const CatalogRequestModeration = z
  .object({
    status: CatalogRequestStatus.exclude(['submitted']),
    note: requestText(requestTextLimits.note).optional(),
    duplicate_of: CatalogRequestId.optional().describe('Required with status duplicate: the request that carries this ask on'),
    fulfilled_by: ArtifactId.optional().describe('With status fulfilled: the catalog artifact that answers it (a mirror defaults to its own artifact)'),
  })
  .strict()
  .superRefine((value, context) => {
    if (value.status === 'duplicate' && value.duplicate_of === undefined)
      context.addIssue({ code: 'custom', path: ['duplicate_of'], message: 'status duplicate needs duplicate_of' });
    if (value.status !== 'duplicate' && value.duplicate_of !== undefined)
      context.addIssue({ code: 'custom', path: ['duplicate_of'], message: 'duplicate_of goes only with status duplicate' });
    if (value.status !== 'fulfilled' && value.fulfilled_by !== undefined)
      context.addIssue({ code: 'custom', path: ['fulfilled_by'], message: 'fulfilled_by goes only with status fulfilled' });
  })
  .meta({
    id: 'CatalogRequestModeration',
    description: 'Sets the status of a request; the transition must be allowed (409 otherwise) and is appended to its history.',
  });
export type CatalogRequestModeration = z.input<typeof CatalogRequestModeration>;

export const OpenSourceRadarEntry = z
  .object({
    rank: z.number().int().positive(),
    kind: z.enum(['mirror', 'source']),
    artifact_id: ArtifactId.nullable(),
    repo: z.string().nullable(),
    source: ArtifactSource.nullable(),
    requesters: z.number().int().positive().describe('Distinct requesters (hashed identities, not verified people)'),
    requests: z.number().int().positive(),
    latest_request_id: CatalogRequestId,
    latest_status: CatalogRequestStatus,
    first_requested_at: timestamp,
    last_requested_at: timestamp,
    in_catalog: z.boolean().describe('The catalog lists it (for a mirror: the artifact exists)'),
    hosted: z.boolean().describe('Its files are hosted here (for a source: the listed artifact is hosted)'),
  })
  .meta({ id: 'OpenSourceRadarEntry' });
export type OpenSourceRadarEntry = z.infer<typeof OpenSourceRadarEntry>;

export const OpenSourceRadarResponse = z.object({ data: z.array(OpenSourceRadarEntry), generated_at: timestamp }).meta({
  id: 'OpenSourceRadarResponse',
  description: 'Most wanted sources and mirrors by distinct requesters; rejected and fulfilled requests are left out.',
});
export type OpenSourceRadarResponse = z.infer<typeof OpenSourceRadarResponse>;
