import { z } from 'zod';
import { BlackboardItemId, ChannelKey, CursorTimestamp } from './fields.ts';
import { BlackboardRecord } from './records.ts';

/**
 * The event id of a watch stream: the keyset cursor of the last post sent, `<created_at>/<id>`
 * (or `<created_at>/` before any post: the point the stream started from). Sent back as
 * `Last-Event-ID`, it resumes right after that post, so a reconnect loses and repeats nothing.
 */
export const BlackboardWatchCursor = z
  .string()
  .max(80)
  .transform((text, context) => {
    const slash = text.lastIndexOf('/');
    const since = slash < 0 ? text : text.slice(0, slash);
    const sinceId = slash < 0 ? '' : text.slice(slash + 1);
    if (!CursorTimestamp.safeParse(since).success || (sinceId !== '' && !BlackboardItemId.safeParse(sinceId).success)) {
      context.addIssue({ code: 'custom', message: 'must be an event id this stream sent: <created_at>/<item id>' });
      return z.NEVER;
    }
    return { since, since_id: sinceId === '' ? undefined : sinceId };
  })
  .meta({ id: 'BlackboardWatchCursor' });

/** The cursor as an event id: the inverse of BlackboardWatchCursor. */
export const watchEventId = (cursor: { since: string; since_id?: string | null }) => `${cursor.since}/${cursor.since_id ?? ''}`;

export const BlackboardWatchRequest = z
  .strictObject({
    key: ChannelKey,
    since: CursorTimestamp.optional().describe('Start after this created_at (with since_id: after that post); absent: only posts made from now on'),
    since_id: BlackboardItemId.optional(),
  })
  .meta({ id: 'BlackboardWatchRequest' });
export type BlackboardWatchRequest = z.output<typeof BlackboardWatchRequest>;

export const BlackboardWatchHeaders = z.looseObject({
  'last-event-id': BlackboardWatchCursor.optional().describe('The id of the last event received; it wins over since/since_id'),
});

/**
 * `watch-started` (once, first: the cursor the stream starts from, as its id), then `post-created` per new live
 * post of the channel, oldest first, each with its cursor as id. Silences are filled with
 * keep-alive comments. `error` with code `server_shutting_down` ends a stream whose server is
 * stopping: reconnect with Last-Event-ID.
 */
export const BlackboardWatchEvent = z
  .union([
    BlackboardRecord,
    z.object({ since: z.string(), since_id: z.string().nullable() }),
    z.object({ code: z.string(), error: z.string(), retryable: z.boolean().optional() }),
  ])
  .meta({ id: 'BlackboardWatchEvent' });
export type BlackboardWatchEvent = z.output<typeof BlackboardWatchEvent>;
