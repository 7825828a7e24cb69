import test from 'ava';
import { ChunkedStack } from '../src/bounded/chunked-stack.ts';

test('a chunked stack pops what was pushed in reverse order, across block edges, and peeks the top', (t) => {
  const stack = new ChunkedStack<number>();
  t.is(stack.pop(), undefined);
  t.is(stack.peek(), undefined);
  const count = 16_384 * 2 + 1;
  for (let index = 0; index < count; index += 1) {
    stack.push(index);
    t.is(stack.peek(), index);
  }
  t.is(stack.length, count);
  // Down across two edges and back up across one: the blocks are dropped and made again.
  for (let index = count - 1; index >= 16_000; index -= 1) t.is(stack.pop(), index);
  for (let index = 16_000; index < 16_500; index += 1) stack.push(index);
  for (let index = 16_499; index >= 0; index -= 1) if (stack.pop() !== index) return t.fail(`expected ${index}`);
  t.is(stack.length, 0);
  t.is(stack.pop(), undefined);
});
