/**
 * One query style in the server (docs/contributing.md, "Code conventions"): `sequelize.query`
 * takes named `replacements`, never `bind`. eslint.config.js holds the rule, with no file exempt;
 * this test makes it part of `pnpm test`.
 */
import test from 'ava';
import { ESLint } from 'eslint';

const root = new URL('..', import.meta.url).pathname;
const RULE = 'no-restricted-syntax';

const findingsOf = (results: ESLint.LintResult[]) =>
  results.flatMap((result) =>
    result.messages.filter((message) => message.ruleId === RULE).map((message) => `${result.filePath.slice(root.length)}:${message.line}`),
  );

test('no query in packages/server/src passes bind', async (t) => {
  const results = await new ESLint({ cwd: root }).lintFiles(['packages/server/src/**/*.ts']);
  t.true(results.length > 100, `the lint saw only ${results.length} files`);
  t.deepEqual(findingsOf(results), []);
});

test('the rule refuses bind, in both spellings, and lets replacements and driver arrays pass', async (t) => {
  const eslint = new ESLint({ cwd: root });
  const source = [
    "export const a = (s: any) => s.query('SELECT $1', { bind: [1] });",
    "export const b = (s: any, bind: unknown[]) => s.query('SELECT $1', { bind, type: 'SELECT' });",
    "export const c = (s: any) => s.query('SELECT :one', { replacements: { one: 1 } });",
    "export const d = (client: any) => client.query({ text: 'SELECT $1', values: [1] });",
  ].join('\n');
  const [result] = await eslint.lintText(`${source}\n`, { filePath: `${root}packages/server/src/query-style-probe.ts` });
  t.deepEqual(
    result!.messages.map((message) => `${message.line} ${message.ruleId}`),
    [`1 ${RULE}`, `2 ${RULE}`],
  );
});
