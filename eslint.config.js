// The super-linear regex rules: the project's bounded-work rule says no caller text may drive a
// regex into backtracking, and these two rules prove it statically (docs/reliability.md). And the
// one query style of the server's SQL.
import tsParser from '@typescript-eslint/parser';
import regexp from 'eslint-plugin-regexp';

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
];
