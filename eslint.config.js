// The super-linear regex rules: the project's bounded-work rule says no caller text may drive a
// regex into backtracking, and these two rules prove it statically (docs/reliability.md). And the
// one query style of the server's SQL.
import tsParser from '@typescript-eslint/parser';
import regexp from 'eslint-plugin-regexp';

/** Files that still pass `bind` to sequelize.query (test/query-style-lint.test.ts keeps this list true). */
export const QUERY_STYLE_PENDING = [
  'packages/server/src/features/identity/key-usage-batch.ts',
  'packages/server/src/features/jobs/job-queue.ts',
  // Both paths: the response cache is moving from features/inference to features/responses.
  'packages/server/src/features/inference/response-cache-store.ts',
  'packages/server/src/features/responses/cache/response-cache-store.ts',
];

export default [
  {
    files: ['packages/*/src/**/*.ts'],
    languageOptions: { parser: tsParser, ecmaVersion: 'latest', sourceType: 'module' },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    plugins: { regexp },
    rules: {
      // "potential": a regex kept in a table or passed around has no usage the rule can see,
      // and those (screening, classifier patterns) are exactly the ones that meet caller text.
      'regexp/no-super-linear-backtracking': ['error', { report: 'potential' }],
      'regexp/no-super-linear-move': ['error', { report: 'potential', ignorePartial: false }],
    },
  },
  {
    // One query style (docs/contributing.md, "Code conventions"): `sequelize.query` takes named
    // `replacements`, never `bind`. Positional `$n` is for statements sent to the driver itself
    // (db/prepared.ts), which take their values as an array.
    files: ['packages/server/src/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.property.name='query'] > ObjectExpression > Property[key.name='bind']",
          message: 'Pass named `replacements` (:name) to sequelize.query, not `bind` ($1): see "Code conventions" in docs/contributing.md.',
        },
      ],
    },
  },
  {
    // Still on `bind`, owned by work in progress when the rule came (issue 41); convert and remove.
    files: QUERY_STYLE_PENDING,
    rules: { 'no-restricted-syntax': 'off' },
  },
];
