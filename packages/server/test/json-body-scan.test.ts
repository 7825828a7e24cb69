import test from 'ava';
import { bodyRules } from '@svc/schemas';
import { JsonBodyScan } from '../src/http/json-text-guard.ts';

/** The scan's verdict on a body written in the given pieces: too deep, or whether it may hold NUL or a lone surrogate. */
function verdict(pieces: Buffer[]): string {
  const scan = new JsonBodyScan();
  for (const piece of pieces) scan.write(piece);
  try {
    return scan.finish().mayHoldUnstorable ? 'suspect' : 'clean';
  } catch (error) {
    return (error as { code: string }).code;
  }
}

const deep = '['.repeat(bodyRules.maxJsonDepth + 1) + ']'.repeat(bodyRules.maxJsonDepth + 1);
const bodies: Array<[string, string]> = [
  ['{"text":"x\\ud800y"}', 'suspect'],
  ['{"text":"x\\u0000y"}', 'suspect'],
  ['{"text":"x\\\\u0000y"}', 'suspect'], // an escaped backslash before u0000: a harmless false alarm, as documented
  ['{"text":"x\\u00e9y","n":[1,[2]]}', 'clean'],
  [`{"text":"a\\"${'['.repeat(100)}"}`, 'clean'],
  [`{"text":"a\\\\\\"${'['.repeat(100)}"}`, 'clean'],
  [`{"text":"a\\\\"}${'['.repeat(bodyRules.maxJsonDepth + 1)}`, 'json_too_deep'],
  [deep, 'json_too_deep'],
  ['{"text":"no escapes at all"}', 'clean'],
];

test('a body read in chunks gets the verdict of the same body read whole, wherever it is cut', (t) => {
  for (const [text, expected] of bodies) {
    const bytes = Buffer.from(text);
    t.is(verdict([bytes]), expected, text);
    for (let cut = 1; cut < bytes.length; cut++) {
      t.is(verdict([bytes.subarray(0, cut), bytes.subarray(cut)]), expected, `${text} cut at ${cut}`);
      // Three pieces, the middle one short: an escape may span all three.
      for (const width of [1, 2, 3]) {
        if (cut + width >= bytes.length) continue;
        t.is(verdict([bytes.subarray(0, cut), bytes.subarray(cut, cut + width), bytes.subarray(cut + width)]), expected, `${text} cut at ${cut}+${width}`);
      }
    }
  }
});
