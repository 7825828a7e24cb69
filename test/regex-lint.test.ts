/**
 * No regular expression in the packages' source can be driven into super-linear backtracking or
 * a quadratic move by the text it scans (the bounded-work rule in DESIGN.md): eslint.config.js runs
 * eslint-plugin-regexp's two rules for that, and this test makes them part of `pnpm test`.
 */
import test from 'ava';
import { ESLint } from 'eslint';

const root = new URL('..', import.meta.url).pathname;
const sources = 'packages/*/src/**/*.ts';

test('no regex in packages/*/src backtracks or moves super-linearly', async (t) => {
  const results = await new ESLint({ cwd: root }).lintFiles([sources]);
  const findings = results.flatMap((result) =>
    result.messages.map((message) => `${result.filePath.slice(root.length)}:${message.line} ${message.ruleId ?? 'parse'}: ${message.message}`),
  );
  for (const finding of findings) t.log(finding);
  t.true(results.length > 100, `the lint saw only ${results.length} files; is the glob in eslint.config.js right?`);
  t.deepEqual(findings, []);
});

test('the lint config catches both shapes it is there for', async (t) => {
  const eslint = new ESLint({ cwd: root });
  const filePath = `${root}packages/server/src/regex-lint-probe.ts`;
  const [result] = await eslint.lintText("export const a = (s: string) => /^(a+)+$/.test(s);\nexport const b = (s: string) => s.replace(/\\/+$/, '');\n", {
    filePath,
  });
  t.deepEqual(
    result!.messages.map((message) => `${message.line} ${message.ruleId}`),
    ['1 regexp/no-super-linear-backtracking', '2 regexp/no-super-linear-move'],
  );
});
