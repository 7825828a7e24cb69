import type { Sequelize } from 'sequelize';
import { queryPositional } from '../../db/prepared.ts';
import type { BlackboardChannelsPage, BlackboardChannelsRequest, PostingState } from '@svc/schemas';
import { cursorCondition, pageCursors, readModeOf } from './cursors.ts';
import { LIVE } from './item-row.ts';
import { channelFilterConditions, nextCalls, normaliseFilters } from './read-items.ts';
import { isoOf, SqlParams } from './sql.ts';

interface ChannelRow {
  key: string;
  id: string;
  created_at: Date | string;
  text: string;
  kind: string | null;
  posts: number;
  participants: number;
  topics: string[];
}

const SNIPPET_CHARS = 200;

/**
 * Active channels within the channel window (the newest stored rows). Filters pick channels with
 * any matching live post in the window; counts, snippet and topics cover all of the channel's live
 * posts in the window. Channels page by their latest live item, newest first.
 */
export async function listChannels(
  sequelize: Sequelize,
  windowRows: number,
  request: BlackboardChannelsRequest,
  posting: PostingState,
): Promise<BlackboardChannelsPage> {
  const mode = readModeOf(request);
  const params = new SqlParams();
  const windowSize = params.add(windowRows);
  const filters = channelFilterConditions(request, params, 'live');
  const cursor = cursorCondition(request, mode, (value) => params.add(value));
  const limit = request.limit;
  const rows = await queryPositional<ChannelRow>(
    sequelize,
    `WITH win AS (SELECT * FROM blackboard_items ORDER BY created_at DESC, id DESC LIMIT ${windowSize}),
     live AS (SELECT * FROM win WHERE ${LIVE}),
     matched AS (SELECT DISTINCT live.key FROM live${filters.length ? ` WHERE ${filters.join(' AND ')}` : ''}),
     latest AS (
       SELECT DISTINCT ON (live.key) live.key, live.id, live.created_at, live.text, live.kind
       FROM live JOIN matched ON matched.key = live.key
       ORDER BY live.key, live.created_at DESC, live.id DESC
     ),
     stats AS (
       SELECT live.key, count(*)::int AS posts, count(DISTINCT live.key_id)::int AS participants
       FROM live JOIN matched ON matched.key = live.key GROUP BY live.key
     )
     SELECT latest.key, latest.id, latest.created_at, latest.text, latest.kind, stats.posts, stats.participants,
       ARRAY(SELECT DISTINCT topic FROM live AS channel_post, unnest(channel_post.topics) AS topic WHERE channel_post.key = latest.key ORDER BY topic LIMIT 8) AS topics
     FROM latest JOIN stats ON stats.key = latest.key
     ${cursor.where ? `WHERE ${cursor.where}` : ''}
     ORDER BY ${cursor.order}
     LIMIT ${params.add(limit + 1)}`,
    params.values,
  );
  const page = rows.slice(0, limit);
  const channels = page.map((row) => {
    const at = isoOf(row.created_at);
    return {
      key: row.key,
      posts: row.posts,
      participants: row.participants,
      latest: { id: row.id, created_at: at, snippet: row.text.length > SNIPPET_CHARS ? `${row.text.slice(0, SNIPPET_CHARS - 1)}…` : row.text, kind: row.kind },
      topics: row.topics,
      cursor: { created_at: at, id: row.id },
    };
  });
  const cursors = pageCursors(
    request,
    mode,
    channels.map((channel) => ({ at: channel.cursor.created_at, id: channel.cursor.id })),
    rows.length > limit,
    new Date(),
  );
  const { since: _s, since_id: _si, before: _b, before_id: _bi, limit: _l, ...rest } = request;
  return { channels, window_rows: windowRows, ...cursors, next_call: nextCalls('channels', normaliseFilters(rest), limit, cursors), posting };
}
