/**
 * What the client's stream idle timeout costs a download's read loop (issue 44): the same body,
 * 64 KiB chunks from memory (no network, no disk, so the guard's own cost is all that differs),
 * read with reader.read() and with idleGuardedRead (a timer armed and cleared per read), in
 * alternating pairs (the order flips each pair). Prints ns per chunk, the median ratio of the
 * pairs, and the load average.
 *
 *   node bench/stream-idle.ts        (BENCH_IDLE_MIB=1024 by default, BENCH_ROUNDS=7 pairs)
 */
import { loadavg } from 'node:os';
import { idleGuardedRead } from '../packages/client/src/stream-idle.ts';
import { median } from './stats.ts';

const CHUNK = 64 * 1024;
const mib = Number(process.env.BENCH_IDLE_MIB ?? 1024);
const rounds = Number(process.env.BENCH_ROUNDS ?? 7);
const chunks = (mib * 1024 * 1024) / CHUNK;
const chunk = new Uint8Array(CHUNK);
const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');

function body(): ReadableStream<Uint8Array> {
  let left = chunks;
  return new ReadableStream({
    pull(controller) {
      if (left-- > 0) controller.enqueue(chunk);
      else controller.close();
    },
  });
}

/** Reads the whole body; answers ms. */
async function readAll(guarded: boolean): Promise<number> {
  const reader = body().getReader();
  const read = guarded ? idleGuardedRead(reader, 60_000, 'the bench body') : () => reader.read();
  const started = performance.now();
  let bytes = 0;
  for (;;) {
    const { done, value } = await read();
    if (done) break;
    bytes += value.byteLength;
  }
  if (bytes !== chunks * CHUNK) throw new Error(`read ${bytes} bytes`);
  return performance.now() - started;
}

process.stdout.write(`stream-idle: ${mib} MiB in ${chunks} chunks of 64 KiB, ${rounds} pairs, load ${load()}\n`);
const ratios: number[] = [];
const plain: number[] = [];
const guarded: number[] = [];
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? [false, true] : [true, false];
  const times: Record<string, number> = {};
  for (const guard of order) times[String(guard)] = await readAll(guard);
  plain.push(times.false!);
  guarded.push(times.true!);
  ratios.push(times.true! / times.false!);
}
const nsPerChunk = (ms: number) => ((ms * 1e6) / chunks).toFixed(0);
process.stdout.write(
  `plain read: ${nsPerChunk(median(plain))} ns/chunk; guarded: ${nsPerChunk(median(guarded))} ns/chunk; ratio guarded/plain ${median(ratios).toFixed(2)}x (pairs ${ratios.map((r) => r.toFixed(2)).join(' ')}); extra ${nsPerChunk(median(guarded) - median(plain))} ns a chunk = ${(((median(guarded) - median(plain)) / 1000 / mib) * 400).toFixed(3)} s on a 400 MiB download; load ${load()}\n`,
);
