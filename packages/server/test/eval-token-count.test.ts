import test from 'ava';
import { countRougeTokens, rougeTokens } from '../src/inference/eval-metrics.ts';

// /v1/eval prices ROUGE-L from token counts before it builds any token: the count must be the
// length of the tokens the metric then scores, or the price and the work part ways.
const samples = [
  '',
  '...',
  'The cat, the hat.',
  'a-b c_d e1f2',
  'İstanbul ǅemal ẞtraße', // letters whose lower case changes length or splits
  '日本語のテキスト と 한국어',
  'x\u0301y combining marks',
  'emoji 🙂 between 👩‍👩‍👧 words',
  '\u0000 control \u0007 chars',
  'word '.repeat(10_000),
];

for (const text of samples) {
  test(`the token count of ${JSON.stringify(text.slice(0, 30))} is the length of its tokens`, (t) => {
    t.is(countRougeTokens(text), rougeTokens(text).length);
  });
}

test('the count is the same called twice (the pattern keeps no state between texts)', (t) => {
  t.is(countRougeTokens('one two three'), 3);
  t.is(countRougeTokens('one two three'), 3);
  t.is(countRougeTokens('four'), 1);
});
