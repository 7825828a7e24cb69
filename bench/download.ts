/**
 * Verified download throughput against a plain fetch-to-file of the same bytes, same run, same
 * server: a 256 MiB hosted file in the built-in object store, fetched over loopback.
 *
 *   pnpm bench:download            (BENCH_DOWNLOAD_MIB=64 for a quicker run, BENCH_ROUNDS=3)
 *
 * Baseline: GET the download path (redirect not followed), then GET the signed URL and pipe the
 * body into a file. Verified: client.catalog.verifiedDownload, which adds the plan, the policy
 * checks, streaming SHA-256, the size checks, the completion call and the atomic rename.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createClient } from '../packages/client/src/index.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

const MIB = 1024 * 1024;
const sizeMiB = Number(process.env.BENCH_DOWNLOAD_MIB ?? 256);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const out = (line: string) => process.stdout.write(`${line}\n`);

const work = await mkdtemp(path.join(tmpdir(), 'svc-bench-download-'));
try {
  const source = path.join(work, 'weights.bin');
  const writer = createWriteStream(source);
  for (let written = 0; written < sizeMiB; written++) if (!writer.write(randomBytes(MIB))) await new Promise<void>((resolve) => writer.once('drain', () => resolve()));
  await new Promise<void>((resolve, reject) => writer.end((error?: Error | null) => (error ? reject(error) : resolve())));
  const catalog = path.join(work, 'catalog.jsonl');
  await writeFile(
    catalog,
    [
      { kind: 'artifact', id: 'bench-weights', name: 'Bench weights', type: 'model', license: 'mit', hosting: 'hosted', source: 'upload' },
      { kind: 'version', artifactId: 'bench-weights', revision: 'v1' },
      { kind: 'file', artifactId: 'bench-weights', revision: 'v1', path: 'weights.bin', contentFile: 'weights.bin' },
    ]
      .map((line) => JSON.stringify(line))
      .join('\n'),
  );
  // The server runs in its own process, as it would in use, so client and server do not share a thread.
  const serverBin = fileURLToPath(new URL('../packages/server/src/bin.ts', import.meta.url));
  const serverEnv = { ...process.env, SVC_HOST: '127.0.0.1', SVC_DATA_DIR: path.join(work, 'data'), SVC_LOG_LEVEL: 'warn', SVC_CATALOG_DEMO: 'off' };
  const imported = spawn(process.execPath, [serverBin, 'catalog', 'import', catalog], { env: serverEnv, stdio: 'inherit' });
  if ((await new Promise<number | null>((resolve) => imported.on('close', resolve))) !== 0) throw new Error('catalog import failed');
  const port = await new Promise<number>((resolve) => {
    const probe = createNetServer().listen(0, '127.0.0.1', () => {
      const { port: free } = probe.address() as AddressInfo;
      probe.close(() => resolve(free));
    });
  });
  const apiUrl = `http://127.0.0.1:${port}`;
  const server: ChildProcess = spawn(process.execPath, [serverBin, 'start'], { env: { ...serverEnv, SVC_PORT: String(port) }, stdio: 'inherit' });
  for (let attempt = 0; ; attempt++) {
    if (await fetch(`${apiUrl}/healthz`).then((response) => response.ok, () => false)) break;
    if (attempt > 300) throw new Error('the server did not start');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  try {
    const client = createClient({ apiUrl, baseUrl: apiUrl, retry: 0, storagePolicy: { hosts: [new URL(apiUrl).host], allowHttpLoopback: true } });
    const plainFetch = async (destination: string) => {
      const redirect = await fetch(`${apiUrl}/api/downloads/bench-weights/weights.bin`, { redirect: 'manual' });
      const response = await fetch(redirect.headers.get('location')!);
      await pipeline(Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>), createWriteStream(destination));
    };
    const verified = async (destination: string) => {
      await client.catalog.verifiedDownload({ artifactId: 'bench-weights', path: 'weights.bin', destination });
    };
    const time = async (run: (destination: string) => Promise<void>, name: string) => {
      const destination = path.join(work, `${name}.bin`);
      const started = performance.now();
      await run(destination);
      const seconds = (performance.now() - started) / 1000;
      if ((await stat(destination)).size !== sizeMiB * MIB) throw new Error(`${name} wrote the wrong size`);
      await rm(destination);
      return seconds;
    };
    await time(plainFetch, 'warm-plain');
    await time(verified, 'warm-verified');
    const plain: number[] = [];
    const checked: number[] = [];
    for (let round = 0; round < rounds; round++) {
      plain.push(await time(plainFetch, 'plain'));
      checked.push(await time(verified, 'verified'));
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const plainRate = sizeMiB / median(plain);
    const verifiedRate = sizeMiB / median(checked);
    out(`file: ${sizeMiB} MiB from the built-in store over loopback, ${rounds} rounds each (median), server in its own process`);
    out(`plain fetch-to-file:  ${plainRate.toFixed(1)} MiB/s  (${plain.map((s) => s.toFixed(2)).join(', ')} s)`);
    out(`verified download:    ${verifiedRate.toFixed(1)} MiB/s  (${checked.map((s) => s.toFixed(2)).join(', ')} s)`);
    out(`ratio verified/plain: ${(verifiedRate / plainRate).toFixed(2)}x median, ${(Math.min(...plain) / Math.min(...checked)).toFixed(2)}x best of ${rounds} (target >= 0.90x)`);
  } finally {
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('close', resolve));
  }
} finally {
  await rm(work, { recursive: true, force: true });
}
