// Only the super-linear regex rules: the project's bounded-work rule says no caller text may
// drive a regex into backtracking, and these two rules prove it statically (docs/reliability.md).
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
];
