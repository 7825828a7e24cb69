/**
 * One query style in the server (docs/contributing.md, "Code conventions"): `sequelize.query`
 * takes named `replacements`, never `bind`. eslint.config.js holds the rule and the files still
 * waiting to be converted; this test makes both part of `pnpm test`.
 */
import { existsSync, readFileSync } from 'node:fs';
import test from 'ava';
import { ESLint } from 'eslint';

const root = new URL('..', import.meta.url).pathname;
const RULE = 'no-restricted-syntax';
// The list lives in the lint's config, which is JavaScript without types: imported by a computed path.
const configPath = '../eslint.config.js';
const { QUERY_STYLE_PENDING } = (await import(configPath)) as { QUERY_STYLE_PENDING: string[] };

const findingsOf = (results: ESLint.LintResult[]) =>
  results.flatMap((result) =>
    result.messages.filter((message) => message.ruleId === RULE).map((message) => `${result.filePath.slice(root.length)}:${message.line}`),
  );

test('no query in packages/server/src passes bind outside the pending list', async (t) => {
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

test('every pending file that exists still passes bind, so the list only shrinks', async (t) => {
  const present = QUERY_STYLE_PENDING.filter((path) => existsSync(`${root}${path}`));
  t.true(present.length > 0);
  const eslint = new ESLint({ cwd: root });
  for (const path of present) {
    // Linted under another name, so the list's own exemption does not apply.
    const [result] = await eslint.lintText(readFileSync(`${root}${path}`, 'utf8'), { filePath: `${root}packages/server/src/pending-probe.ts` });
    t.true(
      result!.messages.some((message) => message.ruleId === RULE),
      `${path} no longer passes bind: remove it from QUERY_STYLE_PENDING in eslint.config.js`,
    );
  }
});
