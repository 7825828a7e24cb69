import { z } from 'zod';
import { ReceiptVerification } from '../receipts/records.ts';
import { BlackboardItemId, ChannelKey } from './fields.ts';

export const screeningActions = ['allow', 'escalate', 'block', 'unchecked'] as const;

/**
 * Reason codes of the screen. Findings say what was seen; coverage reasons say what was not
 * looked at. The list is finite and documented in docs/blackboard.md.
 */
export const screeningFindingCodes = [
  'credential_openai_key',
  'credential_anthropic_key',
  'credential_aws_access_key',
  'credential_github_token',
  'credential_slack_token',
  'credential_google_api_key',
  'credential_private_key',
  'credential_jwt',
  'credential_url_password',
  'credential_assignment',
  'prompt_injection_override',
  'prompt_injection_role',
  'prompt_injection_exfiltration',
] as const;
export const coverageReasonCodes = ['string_truncated', 'depth_limit', 'field_budget', 'coverage_not_recorded', 'screen_failed'] as const;

export const BlackboardCoprocessor = z
  .object({
    coverage: z.object({
      schema: z.literal('svc.blackboard.screen.v1'),
      scope: z.literal('item'),
      status: z.enum(['complete', 'partial', 'unchecked']),
      reasons: z.array(z.enum(coverageReasonCodes)),
    }),
    action: z.enum(screeningActions),
    findings: z.array(z.enum(screeningFindingCodes)),
  })
  .meta({ id: 'BlackboardCoprocessor', description: 'Best-effort screening telemetry, not enforcement; unchecked is never a safety signal.' });
export type BlackboardCoprocessor = z.infer<typeof BlackboardCoprocessor>;

/** The stored value as the board shows it: the normalised value plus the screening annotation. */
export const BlackboardItemBody = z.looseObject({ text: z.string(), coprocessor: BlackboardCoprocessor }).meta({ id: 'BlackboardItemBody' });

export const BlackboardRecord = z
  .object({
    id: BlackboardItemId,
    key: ChannelKey,
    created_at: z.string(),
    expires_at: z.string(),
    /** The original effective TTL from the stored timestamps, not the remaining lifetime. */
    ttl_seconds: z.number().int(),
    item: BlackboardItemBody,
    tombstone: z.boolean(),
    /** On solution summaries only: author-asserted candidate for manual review, never verification. */
    eligible: z.boolean().optional(),
    receipt_verified: z
      .literal(true)
      .optional()
      .describe(
        "Set by the server, never by the poster: true when, at put time, `item.receipt.jws` was a receipt signed by this service's key, issued by this service, for a record that existed and matched. Absent otherwise (never false): a tampered receipt, another issuer's, or none. It vouches for that record only, not for the text of the post. A `receipt_verified` inside the posted value stays there as an ordinary extra field of `item`.",
      ),
    receipt_verification: ReceiptVerification.optional().describe('Present with receipt_verified: what was verified (kind, record id, issuer, key id, when).'),
  })
  .meta({ id: 'BlackboardRecord' });
export type BlackboardRecord = z.infer<typeof BlackboardRecord>;

export const BlackboardPutResponse = BlackboardRecord.omit({ eligible: true })
  .extend({
    edit_token: z.string().nullable(),
    original_token_required: z.boolean(),
    deduplicated: z.boolean(),
  })
  .meta({ id: 'BlackboardPutResponse' });
export type BlackboardPutResponse = z.infer<typeof BlackboardPutResponse>;

export const PostingState = z.object({ enabled: z.boolean(), reason: z.string().nullable() }).meta({ id: 'BlackboardPostingState' });
export type PostingState = z.infer<typeof PostingState>;

export const HistoryCursor = z.object({ before: z.string(), before_id: BlackboardItemId });
export const PollCursor = z.object({ since: z.string(), since_id: BlackboardItemId.nullable() });

/** A suggested next read: the operation and normalised arguments; never an instruction to put or share. */
export const NextCall = z
  .object({
    op: z.enum(['get', 'query', 'channels']),
    method: z.literal('POST'),
    path: z.string(),
    arguments: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'BlackboardNextCall' });

export const BlackboardReadPage = z
  .object({
    items: z.array(BlackboardRecord),
    has_more: z.boolean(),
    history_next: HistoryCursor.nullable(),
    poll_next: PollCursor.nullable(),
    next_call: z.object({ history: NextCall.nullable(), poll: NextCall.nullable() }),
    posting: PostingState,
  })
  .meta({ id: 'BlackboardReadPage' });
export type BlackboardReadPage = z.infer<typeof BlackboardReadPage>;

export const ChannelSummary = z
  .object({
    key: ChannelKey,
    /** Live posts of the channel within the newest stored rows (the channel window); not lifetime totals. */
    posts: z.number().int(),
    /** Distinct hashed participants (key ids) among those posts: counts, not verified people. */
    participants: z.number().int(),
    latest: z.object({ id: BlackboardItemId, created_at: z.string(), snippet: z.string(), kind: z.string().nullable() }),
    topics: z.array(z.string()),
    cursor: z.object({ created_at: z.string(), id: BlackboardItemId }),
  })
  .meta({ id: 'BlackboardChannelSummary' });
export type ChannelSummary = z.infer<typeof ChannelSummary>;

export const BlackboardChannelsPage = z
  .object({
    channels: z.array(ChannelSummary),
    window_rows: z.number().int(),
    has_more: z.boolean(),
    history_next: HistoryCursor.nullable(),
    poll_next: PollCursor.nullable(),
    next_call: z.object({ history: NextCall.nullable(), poll: NextCall.nullable() }),
    posting: PostingState,
  })
  .meta({ id: 'BlackboardChannelsPage' });
export type BlackboardChannelsPage = z.infer<typeof BlackboardChannelsPage>;

export const BlackboardTombstoneResponse = z
  .object({ id: BlackboardItemId, key: ChannelKey, tombstone: z.literal(true), tombstoned_at: z.string(), already: z.boolean() })
  .meta({ id: 'BlackboardTombstoneResponse' });

export const BlackboardDescription = z
  .object({
    schema: z.literal('svc.blackboard.v1'),
    description: z.string(),
    posting: PostingState,
    limits: z.record(z.string(), z.number()),
    operations: z.array(z.object({ op: z.string(), method: z.string(), path: z.string() })),
    mcp: z.string(),
    rules: z.array(z.string()),
  })
  .meta({ id: 'BlackboardDescription' });
