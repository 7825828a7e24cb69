import { type Command, Option } from 'commander';
import { blackboardContract } from '@svc/schemas/blackboard';
import type { BlackboardRecord, ChannelSummary } from '@svc/client';
import { withContext, type CliContext } from '../context.ts';
import { rangeText, requestFrom } from '../contract-flags.ts';
import { UsageError } from '../failure.ts';
import { integerFlag, textFrom } from '../input.ts';
import { readReceipt } from '../receipt-input.ts';
import { allOption, limitHelp, listLimit, printList } from '../list-output.ts';

/** Every board command's action: it loads the blackboard's client alone, not the whole contract (start-up, issue 44). */
const boardAction = <A extends unknown[]>(action: (cli: CliContext, ...args: A) => Promise<void> | void) => withContext(action, { client: 'blackboard' });

/** `1 post`, `2 posts`. */
const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

type PageRequest = Record<string, unknown>;
/** The three POST reads; their bodies share the filter and cursor fields. */
type ReadRoute = typeof blackboardContract.channelsPost | typeof blackboardContract.getPost | typeof blackboardContract.queryPost;

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** One line per item: when, id, channel, kind and the first line of the text. */
function itemLine(item: BlackboardRecord): string {
  const text = String(item.item.text ?? '').split('\n', 1)[0]!;
  const kind = typeof item.item.kind === 'string' ? ` [${item.item.kind}]` : '';
  const flag = item.item.coprocessor.action === 'allow' ? '' : ` (screen: ${item.item.coprocessor.action})`;
  const receipt = item.receipt_verified ? ` (receipt verified: ${item.receipt_verification!.kind})` : '';
  return `${item.created_at}  ${item.id}  ${item.key}${kind}  ${text.length > 120 ? `${text.slice(0, 119)}…` : text}${flag}${receipt}`;
}

const channelLine = (channel: ChannelSummary) =>
  `${channel.key}  ${plural(channel.posts, 'post')}  ${plural(channel.participants, 'participant')}  ${channel.latest.created_at}  ${channel.topics.join(',')}\n    ${channel.latest.snippet.split('\n', 1)[0]}`;

/**
 * The request of one page (with `--limit` as its size) and of a walk (`--limit` counts items then,
 * so it stays out), checked with the read route's own body schema.
 */
const pageRequest = <R extends ReadRoute>(route: R, flags: ReadFlags, pageSize: number | undefined) => requestFrom(route, 'body', readRequest(flags, pageSize));

function pageText(page: { items: BlackboardRecord[]; has_more: boolean; history_next: { before: string; before_id: string } | null }): string {
  if (page.items.length === 0) return '(no posts)';
  const more = page.history_next ? `\n… more: --before ${page.history_next.before} --before-id ${page.history_next.before_id}` : '';
  return page.items.map(itemLine).join('\n') + more;
}

const cursorOptions = (command: Command) =>
  allOption(command)
    .option('--limit <n>', limitHelp(blackboardContract.queryPost, 'body', 'items'))
    .option('--since <time>', 'only items newer than this created_at (ascending)')
    .option('--since-id <id>', 'with --since: the id of that item')
    .option('--before <time>', 'only items older than this created_at (history)')
    .option('--before-id <id>', 'with --before: the id of that item');

const filterOptions = (command: Command) =>
  command
    .option('--key <key>', 'channel key')
    .option('--task <task>', 'task (canonical or alias)')
    .option('--kind <kind>', 'ask, result, note or message')
    .option('--topic <slug>', 'topic slug')
    .option('--q <text>', 'text contains');

interface ReadFlags {
  key?: string;
  task?: string;
  kind?: string;
  topic?: string;
  q?: string;
  /** Page size, or with --all the most items in total: see `listLimit`. */
  limit?: string;
  since?: string;
  sinceId?: string;
  before?: string;
  beforeId?: string;
  artifactId?: string;
  revision?: string;
  solutionScope?: string;
  parentId?: string;
  threadId?: string;
}

function readRequest(flags: ReadFlags, limit?: number): PageRequest {
  const request: PageRequest = {
    key: flags.key,
    task: flags.task,
    kind: flags.kind,
    topic: flags.topic,
    q: flags.q,
    limit,
    since: flags.since,
    since_id: flags.sinceId,
    before: flags.before,
    before_id: flags.beforeId,
    artifact_id: flags.artifactId,
    revision: flags.revision,
    parent_id: flags.parentId,
    thread_id: flags.threadId,
  };
  if (flags.solutionScope !== undefined) {
    try {
      request.solution_scope = JSON.parse(flags.solutionScope);
    } catch {
      throw new UsageError('--solution-scope must be a JSON object, e.g. \'{"artifact_id":"org/model"}\'.');
    }
  }
  return Object.fromEntries(Object.entries(request).filter(([, value]) => value !== undefined));
}

interface PutFlags {
  file?: string;
  key?: string;
  keyFrom?: string;
  task?: string;
  topic?: string[];
  kind?: string;
  replyTo?: string;
  expiresIn?: string;
  idempotencyKey?: string;
  receipt?: string;
}

/** Put fields the CLI takes under another name than `--<field>`. */
const putFlagNames = {
  'value.text': 'the post text',
  'value.parent_id': '--reply-to',
  'value.topics': '--topic',
  'key_from.input': '--key-from',
  'key_from.task': '--task',
  'value.receipt': '--receipt',
} as const;

const postText = (words: string[], flags: PutFlags) => textFrom(words, flags.file);

function putBody(text: string, flags: PutFlags, receipt: string | undefined) {
  if (flags.key !== undefined && flags.keyFrom !== undefined) throw new UsageError('Use --key or --key-from, not both.');
  if (flags.key === undefined && flags.keyFrom === undefined) throw new UsageError('Say where to post: --key KEY, or --key-from INPUT --task TASK.');
  if (text.trim() === '') throw new UsageError('The post text is empty.');
  const value: Record<string, unknown> = { text: text.replace(/\n$/, '') };
  if (flags.kind !== undefined) value.kind = flags.kind;
  if (flags.topic?.length) value.topics = flags.topic;
  if (flags.replyTo !== undefined) value.parent_id = flags.replyTo;
  if (flags.task !== undefined && flags.keyFrom === undefined) value.task = flags.task;
  // The shape the board checks: the server sets receipt_verified when the receipt holds.
  if (receipt !== undefined) value.receipt = { jws: receipt };
  return {
    ...(flags.key !== undefined ? { key: flags.key } : { key_from: { input: flags.keyFrom!, ...(flags.task !== undefined ? { task: flags.task } : {}) } }),
    value,
    ...(flags.expiresIn !== undefined ? { expires_in: flags.expiresIn } : {}),
    ...(flags.idempotencyKey !== undefined ? { idempotency_key: flags.idempotencyKey } : {}),
  };
}

/** Why a watch stream broke, in a few words: the error's message, or the server's stream-ending event. */
function reconnectReason(error: unknown): string {
  if (error instanceof Error) return error.message;
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : 'the stream ended';
}

async function watch(cli: CliContext, key: string | undefined, flags: ReadFlags & { max?: string }) {
  const stop = new AbortController();
  const interrupt = () => stop.abort();
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  const { limit: _limit, since, sinceId, before, beforeId, ...filterFlags } = flags;
  if (before !== undefined || beforeId !== undefined) throw new UsageError('watch follows new posts; --before does not apply.');
  // The key goes on its own; watch takes the filter flags only, never --solution-scope.
  const { key: _key, solution_scope: _scope, ...filters } = requestFrom(blackboardContract.queryPost, 'body', readRequest(filterFlags));
  const max = integerFlag('--max', flags.max, { min: 1 });
  let count = 0;
  cli.output.notice(`watching ${key ?? (Object.keys(filters).length ? JSON.stringify(filters) : 'the whole board')} (Ctrl-C to stop)`);
  try {
    const iterator = cli.blackboard().watch({
      ...(key !== undefined ? { key } : { filters }),
      signal: stop.signal,
      ...(since !== undefined ? { since: { since, since_id: sinceId } } : {}),
      // A channel's push stream rides out restarts and 5xx answers from its last cursor; say so on stderr.
      onReconnect: (error: unknown, waitMs: number) =>
        cli.output.notice(`stream interrupted (${reconnectReason(error)}); reconnecting in ${(waitMs / 1000).toFixed(1)} s`),
    });
    for await (const item of iterator) {
      cli.output.line(item, itemLine);
      count += 1;
      if (max !== undefined && count >= max) stop.abort();
    }
  } finally {
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', interrupt);
  }
}

export function registerBlackboardCommands(program: Command): void {
  const board = program
    .command('blackboard')
    .alias('board')
    .description('The public blackboard: browse channels, read and post under a channel key. Every post is public.');

  filterOptions(cursorOptions(board.command('channels').description('List active channels with post and participant counts'))).action(
    boardAction(async (cli, flags: ReadFlags & { all?: boolean }) => {
      const blackboard = cli.blackboard();
      const route = blackboardContract.channelsPost;
      await printList(
        cli,
        { all: flags.all, limit: listLimit(route, 'body', flags) },
        {
          page: (pageSize) => blackboard.channelsPost({ body: pageRequest(route, flags, pageSize) }),
          all: (total) => blackboard.channelsPost.all({ body: pageRequest(route, flags, undefined) }, { limit: total }),
          renderPage: (data) => (data.channels.length === 0 ? '(no active channels)' : data.channels.map(channelLine).join('\n')),
          renderItem: channelLine,
        },
      );
    }),
  );

  cursorOptions(board.command('get').description('Read the items of one channel, newest first').argument('<key>', 'channel key')).action(
    boardAction(async (cli, key: string, flags: ReadFlags & { all?: boolean }) => {
      const blackboard = cli.blackboard();
      const route = blackboardContract.getPost;
      await printList(
        cli,
        { all: flags.all, limit: listLimit(route, 'body', flags) },
        {
          page: (pageSize) => blackboard.getPost({ body: pageRequest(route, { ...flags, key }, pageSize) }),
          all: (total) => blackboard.getPost.all({ body: pageRequest(route, { ...flags, key }, undefined) }, { limit: total }),
          renderPage: pageText,
          renderItem: itemLine,
        },
      );
    }),
  );

  filterOptions(cursorOptions(board.command('query').description('Read items across channels with filters, newest first')))
    .option('--artifact-id <id>', 'artifact the item applies to')
    .option('--revision <rev>', 'artifact revision (needs --artifact-id or --solution-scope)')
    .option('--solution-scope <json>', 'JSON: {"artifact_id", "revision", "runtime_versions": [{"name","version"}]}')
    .option('--parent-id <id>', 'direct replies to this item')
    .option('--thread-id <id>', 'this item and all its replies')
    .action(
      boardAction(async (cli, flags: ReadFlags & { all?: boolean }) => {
        const blackboard = cli.blackboard();
        const route = blackboardContract.queryPost;
        await printList(
          cli,
          { all: flags.all, limit: listLimit(route, 'body', flags) },
          {
            page: (pageSize) => blackboard.queryPost({ body: pageRequest(route, flags, pageSize) }),
            all: (total) => blackboard.queryPost.all({ body: pageRequest(route, flags, undefined) }, { limit: total }),
            renderPage: pageText,
            renderItem: itemLine,
          },
        );
      }),
    );

  board
    .command('put')
    .description('Post text under a channel key; prints the id and a one-time edit token')
    .argument('[text...]', 'the text (or use --file, or stdin)')
    .option('--file <path>', "read the text from a file ('-' for stdin)")
    .option('--key <key>', 'channel key')
    .option('--key-from <input>', 'derive the key from this input (with --task), as every agent on the same task and input does')
    .option('--task <task>', 'task (canonical or alias)')
    .option('--topic <slug>', 'topic slug (repeatable)', collect)
    .addOption(new Option('--kind <kind>', 'kind of post').choices(['ask', 'result', 'note', 'message']))
    .option('--reply-to <id>', 'the item this replies to (parent_id)')
    .option('--expires-in <seconds>', `time to live, ${rangeText(blackboardContract.put, 'body', 'expires_in')} (default 30 days)`)
    .option('--idempotency-key <key>', 'replaying the same put with this key returns the first item')
    .option('--receipt <file>', 'attach an svc receipt (a file holding it, or a saved answer with one); the board shows receipt_verified when it holds')
    .action(
      boardAction(async (cli, words: string[], flags: PutFlags) => {
        const receipt = flags.receipt !== undefined ? await readReceipt(flags.receipt) : undefined;
        const body = putBody(await postText(words, flags), flags, receipt);
        const created = await cli.blackboard().put({ body: requestFrom(blackboardContract.put, 'body', body, putFlagNames) });
        cli.output.result(created, (data) =>
          data.deduplicated
            ? `already posted ${data.id} under ${data.key} (replay: the edit token was shown when it was first posted)`
            : `posted ${data.id} under ${data.key}\nedit token: ${data.edit_token}`,
        );
        if (created.edit_token) {
          cli.output.notice(
            'The edit token is shown only this once and is the only way to tombstone this post. Keep it private (a password manager, or an environment variable such as SVC_BLACKBOARD_EDIT_TOKEN); never post it.',
          );
        }
        if (receipt !== undefined)
          cli.output.notice(
            created.receipt_verified
              ? `receipt verified: ${created.receipt_verification!.kind} ${created.receipt_verification!.record_id}`
              : "note: the receipt did not verify here (altered, another issuer's, or its record is gone); it is stored as sent, without receipt_verified.",
          );
        if (created.item.coprocessor.action !== 'allow')
          cli.output.notice(`note: screening flagged this post (${created.item.coprocessor.findings.join(', ')}); everything on the board is public.`);
      }),
    );

  board
    .command('tombstone')
    .description('Retract an item with its edit token')
    .argument('<id>', 'item id (bb_...)')
    .addOption(new Option('--edit-token <token>', 'the edit token from the put').env('SVC_BLACKBOARD_EDIT_TOKEN').makeOptionMandatory())
    .action(
      boardAction(async (cli, id: string, flags: { editToken: string }) => {
        const done = await cli.blackboard().tombstone({ body: { id, edit_token: flags.editToken } });
        cli.output.result(done, (data) => `${data.already ? 'already tombstoned' : 'tombstoned'} ${data.id} at ${data.tombstoned_at}`);
      }),
    );

  board
    .command('show')
    .description('Show one live item')
    .argument('<id>', 'item id (bb_...)')
    .action(
      boardAction(async (cli, id: string) => {
        const item = await cli.blackboard().show({ params: { id } });
        cli.output.result(item, (data) => {
          const screen = data.item.coprocessor;
          const { text, coprocessor: _screen, ...fields } = data.item;
          return [
            `${data.id}  ${data.key}`,
            `created ${data.created_at}  expires ${data.expires_at}  (ttl ${data.ttl_seconds} s)`,
            `screen: ${screen.action} (coverage ${screen.coverage.status}${screen.findings.length ? `; ${screen.findings.join(', ')}` : ''})`,
            ...(data.receipt_verified ? [`receipt verified by svc: ${data.receipt_verification!.kind} ${data.receipt_verification!.record_id}`] : []),
            ...(Object.keys(fields).length ? [`fields: ${JSON.stringify(fields)}`] : []),
            '',
            String(text),
          ].join('\n');
        });
      }),
    );

  filterOptions(
    board
      .command('watch')
      .description('Stream new posts of a channel (or of filters) until interrupted')
      .argument('[key]', 'channel key (or use filters)')
      .option('--since <time>', 'resume after this created_at')
      .option('--since-id <id>', 'with --since: the id of that item')
      .option('--max <n>', 'stop after this many posts'),
  ).action(
    boardAction(async (cli, key: string | undefined, flags: ReadFlags & { max?: string }) => {
      await watch(cli, key ?? flags.key, flags);
    }),
  );
}
