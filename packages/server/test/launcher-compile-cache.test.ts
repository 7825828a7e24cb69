import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { SERVER_BIN } from '@svc/testing/server-process';

const TYPESCRIPT_BIN = fileURLToPath(new URL('../src/bin.ts', import.meta.url));

/**
 * Starts `svc-server start` from `bin` with a preload that, at the moment the first process
 * replaces itself (process.execve: bin.ts's re-run with the V8 settings and compile cache), writes
 * the internal modules it loaded to a file, then stops it. TMPDIR is the test's own, so is the
 * compile cache's default directory (os.tmpdir()/node-compile-cache).
 */
async function firstProcessModules(bin: string, home: string): Promise<string[]> {
  const report = path.join(home, `modules-${Date.now()}.json`);
  const preload = path.join(home, 'preload.mjs');
  await writeFile(
    preload,
    `import { writeFileSync } from 'node:fs';
const execve = process.execve;
process.execve = (...args) => {
  writeFileSync(${JSON.stringify(report)}, JSON.stringify(process.moduleLoadList));
  return execve.apply(process, args);
};`,
  );
  const child = spawn(process.execPath, ['--import', preload, bin, 'start'], {
    env: { PATH: process.env.PATH, TMPDIR: home, SVC_DATA_DIR: path.join(home, 'data'), SVC_PORT: '0', SVC_LOG_LEVEL: 'silent', SVC_CATALOG_DEMO: 'off' },
    stdio: 'ignore',
  });
  try {
    for (let waited = 0; waited < 60_000; waited += 50) {
      const written = await readFile(report, 'utf8').catch(() => undefined);
      if (written) return JSON.parse(written) as string[];
      if (child.exitCode !== null) throw new Error(`${bin} exited with ${child.exitCode} before it re-ran itself`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`${bin} did not re-run itself within 60 s`);
  } finally {
    child.kill('SIGKILL');
  }
}

const loadsTypeScriptStripper = (modules: string[]) => modules.some((name) => name.includes('amaro'));

test("svc-server's first process reads bin.ts from the compile cache: Node's TypeScript stripper (amaro) is not loaded before the re-run", async (t) => {
  const home = await mkdtemp(path.join(tmpdir(), 'svc-launcher-'));
  try {
    t.true(SERVER_BIN.endsWith('.js'), SERVER_BIN);
    // The first start fills the cache (it strips bin.ts once); every start after it finds bin.ts there.
    await firstProcessModules(SERVER_BIN, home);
    t.false(loadsTypeScriptStripper(await firstProcessModules(SERVER_BIN, home)));
    // What the JavaScript first step spares: started from bin.ts itself, the first process strips it, cache or not.
    t.true(loadsTypeScriptStripper(await firstProcessModules(TYPESCRIPT_BIN, home)));
  } finally {
    await rm(home, { recursive: true, force: true });
  }
});
