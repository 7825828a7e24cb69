import test from 'ava';
import { openAiDuration } from '../src/http/openai-duration.ts';

test('reset durations are written as OpenAI writes them (Go durations)', (t) => {
  t.is(openAiDuration(20), '20ms');
  t.is(openAiDuration(0), '0ms');
  t.is(openAiDuration(999.6), '1s');
  t.is(openAiDuration(1000), '1s');
  t.is(openAiDuration(1500), '1.5s');
  t.is(openAiDuration(41_250), '41.25s');
  t.is(openAiDuration(360_000), '6m0s');
  t.is(openAiDuration(90_500), '1m30.5s');
  t.is(openAiDuration(3_600_000), '1h0m0s');
  t.is(openAiDuration(-5), '0ms');
});
