import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { BodyOverflowError, writeHashedBody } from '../src/catalog/hashed-file-write.ts';

/**
 * The body-to-file step of the verified download on its own: bodies are web streams built here
 * (standing in for a fetch response), the file is real. Every case runs on the hashing thread
 * and inline (what happens where worker threads are not allowed).
 */
const bodyOf = (chunks: Uint8Array[]) =>
  new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks.shift();
      if (chunk) controller.enqueue(chunk);
      else controller.close();
    },
  });
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const temporaryFile = async (name: string) => path.join(await mkdtemp(path.join(tmpdir(), 'svc-hashed-write-')), name);

for (const [mode, inline] of [
  ['hashing thread', false],
  ['inline', true],
] as const) {
  test(`${mode}: a body of many chunks, beyond the write-ahead bound, lands whole with its digest`, async (t) => {
    // 12 MiB in 64 KiB chunks: reading outruns the disk at times, so writes are batched and waited on.
    const bytes = randomBytes(12 * 1024 * 1024);
    const chunks = Array.from({ length: bytes.length / 65536 }, (_, index) => bytes.subarray(index * 65536, (index + 1) * 65536));
    const count = chunks.length;
    const file = await temporaryFile('big.bin');
    const seen: number[] = [];
    const result = await writeHashedBody(bodyOf(chunks), file, { inline, maxBytes: bytes.length, onBytes: (received) => seen.push(received) });
    t.deepEqual(result, { sha256: sha256(bytes), sizeBytes: bytes.length });
    t.true((await readFile(file)).equals(bytes));
    t.is(seen.length, count, 'one progress call per chunk');
    t.is(seen.at(-1), bytes.length);
  });

  test(`${mode}: a resumed partial file is hashed from its first byte and appended to; bytes past the resume point are cut`, async (t) => {
    const bytes = randomBytes(3 * 1024 * 1024 + 17);
    const held = 1024 * 1024 + 5;
    const file = await temporaryFile('resumed.bin');
    // What an interrupted run left, plus a torn tail that is not part of what it held.
    await writeFile(file, Buffer.concat([bytes.subarray(0, held), Buffer.from('torn tail')]));
    const rest = bytes.subarray(held);
    const chunks = Array.from({ length: Math.ceil(rest.length / 65536) }, (_, index) => new Uint8Array(rest.subarray(index * 65536, (index + 1) * 65536)));
    const seen: number[] = [];
    const result = await writeHashedBody(bodyOf(chunks), file, { inline, maxBytes: rest.length, resumeFrom: held, onBytes: (received) => seen.push(received) });
    t.deepEqual(result, { sha256: sha256(bytes), sizeBytes: bytes.length });
    t.true((await readFile(file)).equals(bytes));
    t.is(seen.at(-1), rest.length, 'progress counts the new bytes');
    // A whole partial and no body: the digest of the file as it is.
    t.deepEqual(await writeHashedBody(null, file, { inline, maxBytes: 0, resumeFrom: bytes.length }), { sha256: sha256(bytes), sizeBytes: bytes.length });
  });

  test(`${mode}: a partial file shorter than the resume point fails, nothing appended`, async (t) => {
    const file = await temporaryFile('short.bin');
    await writeFile(file, Buffer.alloc(100, 1));
    const error = await t.throwsAsync(writeHashedBody(bodyOf([new Uint8Array(10)]), file, { inline, maxBytes: 10, resumeFrom: 200 }));
    t.is((error as NodeJS.ErrnoException).code, 'ESHORT');
    t.is((await readFile(file)).length, 100);
  });

  test(`${mode}: an empty or absent body writes an empty file`, async (t) => {
    const empty = await temporaryFile('empty.bin');
    t.deepEqual(await writeHashedBody(bodyOf([]), empty, { inline, maxBytes: 10 }), { sha256: sha256(new Uint8Array()), sizeBytes: 0 });
    const absent = await temporaryFile('absent.bin');
    t.deepEqual(await writeHashedBody(null, absent, { inline, maxBytes: 10 }), { sha256: sha256(new Uint8Array()), sizeBytes: 0 });
    t.is((await readFile(absent)).length, 0);
  });

  test(`${mode}: more bytes than allowed stop the read at the chunk that crosses the bound`, async (t) => {
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(1000).fill(7));
      },
    });
    const file = await temporaryFile('over.bin');
    await t.throwsAsync(writeHashedBody(endless, file, { inline, maxBytes: 2500 }), { instanceOf: BodyOverflowError });
    t.true(pulled < 10, `read ${pulled} chunks`);
    t.true((await readFile(file)).length <= 2000, 'nothing past the bound is written');
  });

  test(`${mode}: an abort ends a body that never finishes, and a file already there is never overwritten`, async (t) => {
    const stalled = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array([1, 2, 3]));
      },
    });
    const abort = new AbortController();
    const file = await temporaryFile('stalled.bin');
    const writing = writeHashedBody(stalled, file, {
      inline,
      maxBytes: 100,
      signal: abort.signal,
      onBytes: () => setTimeout(() => abort.abort(new Error('stop')), 10),
    });
    await t.throwsAsync(writing);
    t.true(abort.signal.aborted);

    const existing = await temporaryFile('existing.bin');
    await writeFile(existing, 'keep me');
    await t.throwsAsync(writeHashedBody(bodyOf([new Uint8Array([9])]), existing, { inline, maxBytes: 10 }), { code: 'EEXIST' });
    t.is(await readFile(existing, 'utf8'), 'keep me');
  });
}

test('downloads at once share the hashing thread without mixing their bytes', async (t) => {
  const bodies = [randomBytes(3 * 1024 * 1024 + 17), randomBytes(1024 * 1024), randomBytes(5)];
  const files = await Promise.all(bodies.map((_, index) => temporaryFile(`concurrent-${index}.bin`)));
  const chunked = (bytes: Buffer) =>
    Array.from({ length: Math.ceil(bytes.length / 50_000) }, (_, index) => Uint8Array.from(bytes.subarray(index * 50_000, (index + 1) * 50_000)));
  const results = await Promise.all(
    bodies.map((bytes, index) => writeHashedBody(bodyOf(chunked(bytes)), files[index]!, { inline: false, maxBytes: bytes.length })),
  );
  for (const [index, bytes] of bodies.entries()) {
    t.deepEqual(results[index], { sha256: sha256(bytes), sizeBytes: bytes.length });
    t.true((await readFile(files[index]!)).equals(bytes));
  }
});
