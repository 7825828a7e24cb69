import { z } from 'zod';
import { cursorQuery } from '../cursor-list.ts';
import { cursorPaging } from '../cursor-paging.ts';
import { pageLimit } from '../query.ts';
import { everyoneQuery, everyoneView } from '../everyone-view.ts';
import { defineContract, defineRoute } from '../route.ts';
import {
  CatalogRequestId,
  CatalogRequestKind,
  CatalogRequestModeration,
  CatalogRequestReceiptResponse,
  CatalogRequestStatus,
  CatalogRequestStatusListResponse,
  CatalogRequestSubmissionResponse,
  FeatureCatalogRequest,
  MirrorCatalogRequest,
  OpenSourceRadarResponse,
  SourceCatalogRequest,
} from './records.ts';

const requestRoute = { surface: 'base', tags: ['requests'] } as const;
const writeAuth = { kind: 'scoped', scopes: ['requests:write'] } as const;
const readAuth = { kind: 'scoped', scopes: ['requests:read'] } as const;

const SUBMISSION_DESCRIPTION = [
  '201 with a new receipt. An exact replay (the same principal, the same kind and the same body after trimming; whitespace runs and letter case of repo do not count)',
  'answers 200 with the same receipt and `replayed: true`, creating nothing, whatever its status now: a retry is always safe. To ask again after a rejection, say what changed in use_case.',
  'Text is screened: credential-shaped strings are refused (422 request_credential_refused) and never stored. New requests count against per-principal hourly and daily limits (429 request_rate_limited with Retry-After); replays do not.',
].join(' ');

const submission = <B extends z.ZodType>(path: string, body: B, summary: string) =>
  defineRoute({
    ...requestRoute,
    auth: writeAuth,
    method: 'POST',
    path,
    summary,
    description: SUBMISSION_DESCRIPTION,
    body,
    bodyLimitBytes: 16_384,
    errors: [404, 429],
    responses: { 201: CatalogRequestSubmissionResponse, 200: CatalogRequestSubmissionResponse },
  });

const requestIdParams = z.object({ request_id: CatalogRequestId });

/** The operator sees every principal's requests; `all_requests` is the flag's first name. */
const everyonesRequests = everyoneView({ operator: true, aliases: ['all_requests'] });

export const RequestStatusQuery = cursorQuery({ max: 100, default: 25 }).extend({
  kind: z
    .union([z.literal(''), CatalogRequestKind])
    .optional()
    .transform((value) => (value ? value : undefined))
    .describe('Empty (all kinds), feature, mirror or source'),
  status: z
    .union([z.literal(''), CatalogRequestStatus])
    .optional()
    .transform((value) => (value ? value : undefined))
    .describe('Only requests in this status'),
  ...everyoneQuery(everyonesRequests),
});

export const requestsContract = defineContract({
  feature: submission('/v1/feature-requests', FeatureCatalogRequest, 'Ask for a capability the catalog lacks'),
  mirror: submission('/v1/mirror-requests', MirrorCatalogRequest, "Ask the operator to host an artifact's or repository's files"),
  source: submission('/v1/source-requests', SourceCatalogRequest, 'Ask the operator to add an upstream repository to the catalog'),
  status: defineRoute({
    ...requestRoute,
    auth: readAuth,
    method: 'GET',
    path: '/v1/request-status',
    summary: "Your catalog requests, newest first, by cursor (the operator may see everyone's)",
    query: RequestStatusQuery,
    paging: cursorPaging,
    everyone: everyonesRequests,
    errors: [403],
    responses: { 200: CatalogRequestStatusListResponse },
  }),
  receipt: defineRoute({
    ...requestRoute,
    auth: readAuth,
    method: 'GET',
    path: '/v1/request-status/:request_id',
    summary: "The receipt of one of your requests, with its history (another principal's request is 404)",
    params: requestIdParams,
    errors: [404],
    responses: { 200: CatalogRequestReceiptResponse },
  }),
  moderate: defineRoute({
    ...requestRoute,
    auth: { kind: 'bearer', principals: ['operator'] },
    method: 'PATCH',
    path: '/v1/request-status/:request_id',
    summary: 'Moderate a request: set its status and a note (operator bearer only, never a developer key)',
    description:
      'Allowed transitions: submitted -> under_review|accepted|rejected|duplicate|fulfilled; under_review -> accepted|rejected|duplicate|fulfilled; accepted -> under_review|rejected|fulfilled; rejected -> under_review; duplicate -> under_review; fulfilled is final. Anything else is 409 request_transition_refused. Repeating the current status with the same note changes nothing (a safe retry); with another note it appends the note. Every change is appended to the history.',
    params: requestIdParams,
    body: CatalogRequestModeration,
    bodyLimitBytes: 16_384,
    errors: [404, 409],
    responses: { 200: CatalogRequestReceiptResponse },
  }),
  radar: defineRoute({
    ...requestRoute,
    auth: readAuth,
    method: 'GET',
    path: '/v1/open-source-radar',
    summary: 'The most requested sources and mirrors, by distinct requesters',
    description:
      'Counts requests that are not rejected or fulfilled; a duplicate counts under the request it duplicates. Ties go to the most recently requested.',
    query: z.object({ limit: pageLimit(25, 10) }),
    responses: { 200: OpenSourceRadarResponse },
  }),
});
