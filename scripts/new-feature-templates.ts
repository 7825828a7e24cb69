/**
 * The files `pnpm new:feature` writes (new-feature.ts), as text: a paged list with an operator
 * view (docs/contributing.md's recipes), a create route, a per-principal cap read from a setting,
 * the error code only this feature raises, a migration, a test and a docs page. Seven files: a
 * small feature's contract is one file, and its store and handlers another.
 */
export interface FeatureNames {
  /** `saved-searches`: folders, files, routes. */
  readonly kebab: string;
  /** `savedSearches`: contract key, variables. */
  readonly camel: string;
  /** `SavedSearches`: types, `createSavedSearchesFeature`. */
  readonly pascal: string;
  /** `saved_searches`: the table, error codes. */
  readonly snake: string;
  /** `SVC_SAVED_SEARCHES`: the settings' prefix. */
  readonly env: string;
}

export function featureFiles(n: FeatureNames, timestamp: string): Record<string, string> {
  const schemas = `packages/schemas/src/${n.kebab}`;
  const server = `packages/server/src/features/${n.kebab}`;
  return {
    // A small feature's contract is one file (routes, errors, its entry); split into contract.ts and
    // errors.ts beside index.ts as it grows, as the older features are.
    [`${schemas}/index.ts`]: schemasIndex(n),
    [`${server}/index.ts`]: featureIndex(n),
    // Its store and handlers are one file too (handlers.ts), until either grows into a file of its own.
    [`${server}/handlers.ts`]: storeAndHandlers(n),
    [`${server}/${n.kebab}-config.ts`]: config(n),
    [`packages/server/src/db/migrations/${timestamp}-${n.kebab}.ts`]: migration(n, timestamp),
    [`packages/server/test/${n.kebab}.test.ts`]: featureTest(n),
    [`docs/${n.kebab}.md`]: docsPage(n),
  };
}

const schemasIndex = (n: FeatureNames) => `import { z } from 'zod';
import { cursorList, cursorQuery } from '../cursor-list.ts';
import { cursorPaging } from '../cursor-paging.ts';
import { everyoneQuery, everyoneView } from '../everyone-view.ts';
import { defineFeatureContract, type ErrorCodeTable } from '../feature-contract.ts';
import { defineContract, defineRoute } from '../route.ts';

/** One ${n.kebab} entry, as every route answers it. */
export const ${n.pascal}Entry = z
  .object({
    id: z.string(),
    text: z.string(),
    created_at: z.string().describe('ISO 8601, UTC'),
  })
  .meta({ id: '${n.pascal}Entry' });
export type ${n.pascal}Entry = z.infer<typeof ${n.pascal}Entry>;

export const ${n.pascal}CreateRequest = z.object({ text: z.string().min(1).max(2000) }).meta({ id: '${n.pascal}CreateRequest' });

/** The operator sees everyone's entries with \`everyone=true\`; anyone else, their own. */
const everyones${n.pascal} = everyoneView({ operator: true });

export const ${n.pascal}ListQuery = cursorQuery({ max: 100, default: 20 }).extend({ ...everyoneQuery(everyones${n.pascal}) });
export const ${n.pascal}List = cursorList(${n.pascal}Entry, { object: true, order: 'Newest first.' }).meta({ id: '${n.pascal}List' });

const common = { surface: 'base', tags: ['${n.kebab}'], auth: { kind: 'bearer', principals: ['operator', 'agent'] } } as const;

export const ${n.camel}Contract = defineContract({
  create: defineRoute({
    ...common,
    method: 'POST',
    path: '/v1/${n.kebab}',
    summary: 'Add a ${n.kebab} entry',
    description: 'Each principal holds at most ${n.env}_PER_PRINCIPAL entries (409 \`${n.snake}_limit_reached\` past it).',
    body: ${n.pascal}CreateRequest,
    errors: [409],
    responses: { 201: ${n.pascal}Entry },
  }),
  list: defineRoute({
    ...common,
    method: 'GET',
    path: '/v1/${n.kebab}',
    summary: "Your ${n.kebab} entries, newest first, by cursor (the operator may see everyone's)",
    query: ${n.pascal}ListQuery,
    paging: cursorPaging,
    everyone: everyones${n.pascal},
    errors: [403],
    responses: { 200: ${n.pascal}List },
  }),
});

/** The error codes only ${n.kebab} raises (docs/${n.kebab}.md); the root merges them into \`errorCodes\`. */
export const ${n.camel}Errors = {
  /** The principal holds ${n.env}_PER_PRINCIPAL entries already. */
  ${n.snake}_limit_reached: 409,
} as const satisfies ErrorCodeTable;

/** ${n.pascal}: one entry of the root contract list (\`contract.ts\`). */
export const ${n.camel}FeatureContract = defineFeatureContract({ routes: { ${n.camel}: ${n.camel}Contract }, errors: ${n.camel}Errors });
`;

const featureIndex = (n: FeatureNames) => `import type { ServerDeps } from '../../deps.ts';
import type { Feature } from '../feature.ts';
import { create${n.pascal}Handlers, ${n.pascal}Store } from './handlers.ts';

// The feature list (features/index.ts) reads the settings from here, beside the feature.
export { ${n.camel}ConfigFrom } from './${n.kebab}-config.ts';

/** ${n.pascal}: entries a principal adds and lists, and the operator's view of everyone's. */
export function create${n.pascal}Feature(deps: Pick<ServerDeps, 'database' | 'config'>) {
  const store = new ${n.pascal}Store(deps.database.sequelize, deps.config.${n.camel});
  return { handlers: { ${n.camel}: create${n.pascal}Handlers(store) } } satisfies Feature<'${n.camel}'>;
}
`;

const storeAndHandlers = (n: FeatureNames) => `import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';
import { ${n.camel}Contract, type ${n.pascal}Entry } from '@svc/schemas';
import { keysetPage, listAnswer, NEWEST_FIRST } from '../../db/keyset-page.ts';
import type { RowScope } from '../../http/everyone-view.ts';
import { defineHandlers } from '../../http/handler-types.ts';
import { ServiceError } from '../../service-error.ts';
import { principalKey } from '../identity/index.ts';
import type { ${n.pascal}Config } from './${n.kebab}-config.ts';

const COLUMNS = "id, text, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\\"T\\"HH24:MI:SS.US\\"Z\\"') AS created_at";

/** The ${n.snake} table: each principal's entries, capped per principal. */
export class ${n.pascal}Store {
  readonly #sequelize: Sequelize;
  readonly #config: ${n.pascal}Config;
  constructor(sequelize: Sequelize, config: ${n.pascal}Config) {
    this.#sequelize = sequelize;
    this.#config = config;
  }

  /** Adds an entry; the owner's lock makes the cap exact when one principal adds from two replicas at once. */
  async add(owner: string, text: string): Promise<${n.pascal}Entry> {
    return this.#sequelize.transaction(async (transaction) => {
      await this.#sequelize.query('SELECT pg_advisory_xact_lock(hashtext(:owner))', { replacements: { owner }, transaction });
      const [held] = await this.#sequelize.query<{ count: string }>('SELECT count(*) AS count FROM ${n.snake} WHERE owner = :owner', {
        type: QueryTypes.SELECT,
        replacements: { owner },
        transaction,
      });
      if (Number(held!.count) >= this.#config.perPrincipal)
        throw new ServiceError('${n.snake}_limit_reached', \`You hold \${this.#config.perPrincipal} entries, the most one principal may (${n.env}_PER_PRINCIPAL).\`);
      const [entry] = await this.#sequelize.query<${n.pascal}Entry>(\`INSERT INTO ${n.snake} (id, owner, text) VALUES (:id, :owner, :text) RETURNING \${COLUMNS}\`, {
        type: QueryTypes.SELECT,
        replacements: { id: \`${n.snake.slice(0, 3)}_\${randomUUID()}\`, owner, text },
        transaction,
      });
      return entry!;
    });
  }

  /** One page, newest first: the caller's entries, or everyone's when the operator view was granted. */
  async list(rows: RowScope, page: { limit: number; cursor?: string | undefined }) {
    const found = await keysetPage<${n.pascal}Entry>(
      this.#sequelize,
      {
        select: COLUMNS,
        from: '${n.snake}',
        where: [!rows.everyone && 'owner = :owner'],
        replacements: { owner: rows.everyone ? null : principalKey(rows.principal) },
        keys: NEWEST_FIRST,
      },
      page,
    );
    return { object: 'list' as const, ...listAnswer(found, found.rows) };
  }
}

export function create${n.pascal}Handlers(store: ${n.pascal}Store) {
  return defineHandlers(${n.camel}Contract, {
    async create({ body }, request) {
      return { status: 201, body: await store.add(principalKey(request.principal), body.text) };
    },
    async list({ query }, request) {
      return { status: 200, body: await store.list(request.rows, query) };
    },
  });
}
`;

const config = (n: FeatureNames) => `import { z } from 'zod';
import { integer } from '../../env-values.ts';

/** How many ${n.kebab} entries one principal may hold (docs/${n.kebab}.md). */
export const ${n.camel}ConfigFrom = z
  .object({ ${n.env}_PER_PRINCIPAL: integer(1, 1_000_000, 'an entry count').default(1000) })
  .transform((env) => ({ perPrincipal: env.${n.env}_PER_PRINCIPAL }));

export type ${n.pascal}Config = z.output<typeof ${n.camel}ConfigFrom>;

// What types \`deps.config.${n.camel}\` (declaration merging); the feature list's line reads it.
declare module '../../server-config.ts' {
  interface FeatureConfigs {
    ${n.camel}: ${n.pascal}Config;
  }
}
`;

const migration = (n: FeatureNames, timestamp: string) => `import { sqlMigration } from './types.ts';

/** ${n.pascal} entries: \`owner\` is the principal's key (identity's \`principalKey\`). */
export default sqlMigration(
  '${timestamp}-${n.kebab}',
  [
    \`CREATE TABLE ${n.snake} (
       id text PRIMARY KEY,
       owner text NOT NULL,
       text text NOT NULL,
       created_at timestamptz NOT NULL DEFAULT clock_timestamp()
     )\`,
    'CREATE INDEX ${n.snake}_owner_created ON ${n.snake} (owner, created_at DESC, id DESC)',
    'CREATE INDEX ${n.snake}_created ON ${n.snake} (created_at DESC, id DESC)',
  ],
  ['DROP TABLE ${n.snake}'],
);
`;

const featureTest = (n: FeatureNames) => `import test from 'ava';
import type { SvcError } from '@svc/client';
import { signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

let svc: TestServer;
test.before(async () => {
  svc = await startTestServer({ env: { ${n.env}_PER_PRINCIPAL: '3', SVC_OAUTH_TOKEN_RATE_PER_MINUTE: '100000' } });
});
test.after.always(async () => {
  await svc?.close();
});

test('entries are listed newest first, a page at a time, each principal its own', async (t) => {
  const alice = await signInAgent(svc);
  const bob = await signInAgent(svc);
  const added: string[] = [];
  for (const text of ['one', 'two', 'three']) added.push((await alice.client.${n.camel}.create({ body: { text } })).id);
  await bob.client.${n.camel}.create({ body: { text: "bob's" } });
  const walked: string[] = [];
  for await (const entry of alice.client.${n.camel}.list.all({ query: { limit: 1 } })) walked.push(entry.id);
  t.deepEqual(walked, [...added].reverse());
});

test('a principal holds ${n.env}_PER_PRINCIPAL entries: the last one fits, one more is 409', async (t) => {
  const { client } = await signInAgent(svc);
  for (const text of ['1', '2', '3']) await client.${n.camel}.create({ body: { text } });
  const refused = await t.throwsAsync<SvcError>(client.${n.camel}.create({ body: { text: '4' } }));
  t.like(refused, { status: 409, code: '${n.snake}_limit_reached' });
});

test("the operator sees everyone's entries with everyone=true; an agent asking is 403 everyone_view_not_allowed", async (t) => {
  const { client } = await signInAgent(svc);
  const mine = (await client.${n.camel}.create({ body: { text: 'seen by the operator' } })).id;
  const everyone = await svc.operator.${n.camel}.list({ query: { everyone: true, limit: 100 } });
  t.true(everyone.data.some((entry) => entry.id === mine));
  t.deepEqual((await svc.operator.${n.camel}.list({ query: {} })).data, []);
  const refused = await t.throwsAsync<SvcError>(client.${n.camel}.list({ query: { everyone: true } }));
  t.like(refused, { status: 403, code: 'everyone_view_not_allowed' });
});
`;

const docsPage = (n: FeatureNames) => `# ${n.pascal}

Entries a principal (an agent or the operator) adds and lists: \`POST /v1/${n.kebab}\` adds one,
\`GET /v1/${n.kebab}\` lists the caller's, newest first, a page at a time (\`limit\` 1..100,
default 20, and the \`next_cursor\` of the previous page as \`cursor\`). The operator sees
everyone's entries with \`everyone=true\`; anyone else asking
is refused with 403 \`everyone_view_not_allowed\`.

## Settings

| variable | default | meaning |
| -------- | ------- | ------- |
| \`${n.env}_PER_PRINCIPAL\` | 1000 | entries one principal may hold; past it, 409 \`${n.snake}_limit_reached\` |
`;
