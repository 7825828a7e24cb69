import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { docxFile } from '@svc/testing/docx-fixture';
import { textPdf } from '@svc/testing/pdf-fixtures';
import { run, startUntil, stop } from '@svc/testing/run';

/**
 * The four packages as npm would publish them: packed, installed into a fresh project outside
 * the workspace, imported as ESM, type-checked against their published declarations, their bins
 * run, and `svc-server` started from its tarball. Then `changeset version` and a publish dry run
 * on a copy, so the release path is proven without publishing or touching this checkout.
 * The only network this needs is the npm registry for third-party dependencies (pnpm's store
 * usually has them already).
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PACKAGES = ['schemas', 'client', 'cli', 'server'] as const;
const rootManifest = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };

let work: string;
const tarballs: Record<string, string> = {};
test.before(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'svc-tarballs-'));
});
test.after.always(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

const manifestOf = async (name: string) => JSON.parse(await readFile(path.join(ROOT, 'packages', name, 'package.json'), 'utf8')) as Record<string, unknown>;

test.serial('every package.json is complete for npm', async (t) => {
  for (const name of PACKAGES) {
    const manifest = await manifestOf(name);
    t.is(manifest.name, `@svc/${name}`);
    for (const field of ['version', 'description', 'license', 'repository', 'engines', 'files', 'keywords']) t.truthy(manifest[field], `${name}: ${field}`);
    t.is(manifest.type, 'module');
    t.like(manifest.repository, { type: 'git', directory: `packages/${name}` });
    const published = (manifest.publishConfig as { exports: Record<string, { types: string; import: string; default: string }>; access: string }) ?? {};
    t.is(published.access, 'public', `${name} publishes publicly (a scoped package is private by default)`);
    // `default` too: require(esm) on Node 22.12+ and 24 finds no condition in `import` alone (ERR_PACKAGE_PATH_NOT_EXPORTED).
    t.deepEqual(published.exports['.'], { types: './dist/index.d.ts', import: './dist/index.js', default: './dist/index.js' });
    t.truthy((manifest.scripts as Record<string, string>).prepack, `${name} builds before it is packed`);
  }
});

// Each step is its own test so a slow machine reports progress between them (ava's timeout counts
// from the last finished test); each also has a time limit of its own.
test.serial('pnpm pack builds each package and writes a tarball with workspace versions resolved', async (t) => {
  // Four builds with declarations (three entries each for the schemas and the client): minutes on a loaded two-core machine.
  t.timeout(1_200_000);
  const packed = path.join(work, 'tarballs');
  await mkdir(packed);
  for (const name of PACKAGES) {
    // `pnpm pack` runs prepack (the build) and rewrites workspace:* into real versions, as publish does.
    const result = await run('pnpm', ['pack', '--pack-destination', packed], { cwd: path.join(ROOT, 'packages', name), timeoutMs: 420_000 });
    t.is(result.code, 0, result.stderr);
  }
  for (const file of await readdir(packed)) tarballs[file.replace(/-\d+\.\d+\.\d+.*\.tgz$/, '').replace(/^svc-/, '')] = path.join(packed, file);
  t.deepEqual(Object.keys(tarballs).sort(), [...PACKAGES].sort());
  const client = await run('tar', ['-xzOf', tarballs.client!, 'package/package.json'], { cwd: work, timeoutMs: 30_000 });
  const manifest = JSON.parse(client.stdout) as { dependencies: Record<string, string>; exports: unknown };
  t.regex(manifest.dependencies['@svc/schemas']!, /^\d+\.\d+\.\d+/, 'workspace:* became a version');
  // The root, and the entries a program loads to start fast with one feature (issue 44).
  const entry = (name: string) => ({ types: `./dist/${name}.d.ts`, import: `./dist/${name}.js`, default: `./dist/${name}.js` });
  t.deepEqual(manifest.exports, { '.': entry('index'), './core': entry('core'), './blackboard': entry('blackboard') });
  const clientFiles = (await run('tar', ['-tzf', tarballs.client!], { cwd: work, timeoutMs: 30_000 })).stdout.split('\n');
  for (const name of ['index', 'core', 'blackboard'])
    t.true(clientFiles.includes(`package/dist/${name}.d.ts`) && clientFiles.includes(`package/dist/${name}.js`), name);
  // The web console ships inside the server's package: its page and its fingerprinted assets.
  const serverFiles = (await run('tar', ['-tzf', tarballs.server!], { cwd: work, timeoutMs: 30_000 })).stdout.split('\n');
  t.true(serverFiles.includes('package/console/index.html'));
  t.true(serverFiles.some((file) => /^package\/console\/assets\/index-[\w-]+\.js$/.test(file)));
});

test.serial('the tarballs install into a fresh project outside the workspace and import as ESM', async (t) => {
  t.timeout(400_000);
  const project = path.join(work, 'consumer');
  await mkdir(project);
  const fileSpec = (name: string) => `file:${tarballs[name]}`;
  await writeFile(
    path.join(project, 'package.json'),
    JSON.stringify({
      name: 'svc-consumer',
      private: true,
      type: 'module',
      dependencies: Object.fromEntries(PACKAGES.map((name) => [`@svc/${name}`, fileSpec(name)])),
      devDependencies: { typescript: rootManifest.devDependencies.typescript, '@types/node': rootManifest.devDependencies['@types/node'] },
    }),
  );
  // The tarballs name each other by version; overrides point those names at the tarballs, since nothing is published.
  await writeFile(
    path.join(project, 'pnpm-workspace.yaml'),
    ['overrides:', ...PACKAGES.map((name) => `  "@svc/${name}": "${fileSpec(name)}"`), 'allowBuilds:', '  esbuild: true', '  protobufjs: false', ''].join('\n'),
  );
  const install = await run('pnpm', ['install', '--prefer-offline', '--config.confirmModulesPurge=false'], { cwd: project, timeoutMs: 300_000 });
  t.is(install.code, 0, `${install.stdout}\n${install.stderr}`);

  // ESM import of every package's published entry.
  await writeFile(
    path.join(project, 'smoke.mjs'),
    `import { contract, walkContract } from '@svc/schemas';
import { createClient } from '@svc/client';
import * as cli from '@svc/cli';
import { createServer, loadConfig } from '@svc/server';
const routes = walkContract(contract).length;
process.stdout.write(JSON.stringify({ routes, client: typeof createClient, cli: Object.keys(cli).length > 0, server: typeof createServer + typeof loadConfig }) + '\\n');
const baseUrl = process.argv[2];
if (baseUrl) {
  const svc = createClient({ baseUrl });
  const health = await svc.system.healthz();
  const ids = [];
  for await (const row of svc.catalog.search.all({ query: { limit: 2 } })) ids.push(row.id);
  process.stdout.write(JSON.stringify({ health: health.status, searched: ids.length }) + '\\n');
}
`,
  );
  // The `default` export condition lets CommonJS require the ESM packages (require(esm), Node 22.12+ and 24).
  await writeFile(
    path.join(project, 'require.cjs'),
    `const { createClient } = require('@svc/client');
const { contract, walkContract } = require('@svc/schemas');
process.stdout.write(JSON.stringify({ client: typeof createClient, routes: walkContract(contract).length }) + '\\n');
`,
  );
  const required = await run(process.execPath, ['require.cjs'], { cwd: project, timeoutMs: 60_000 });
  t.is(required.code, 0, required.stderr);
  t.is((JSON.parse(required.stdout) as { client: string }).client, 'function');
  const imported = await run(process.execPath, ['smoke.mjs'], { cwd: project, timeoutMs: 60_000 });
  t.is(imported.code, 0, imported.stderr);
  const summary = JSON.parse(imported.stdout) as { routes: number; client: string; cli: boolean; server: string };
  t.true(summary.routes > 20);
  t.is(summary.client, 'function');
  t.is(summary.server, 'functionfunction');
});

test.serial('a consumer type-checks with tsc, strict and nodenext, against the published declarations', async (t) => {
  t.timeout(300_000);
  const project = path.join(work, 'consumer');
  // A consumer file type-checked strictly against the published declarations.
  await writeFile(
    path.join(project, 'consumer.ts'),
    `import { createClient, SvcError, type SvcClient } from '@svc/client';
import type { DeveloperCredential, SearchRow } from '@svc/schemas';
const svc: SvcClient = createClient({ baseUrl: 'http://127.0.0.1:8787' });
export async function names(): Promise<string[]> {
  const out: string[] = [];
  for await (const key of svc.credentials.list.all({ query: { limit: 10 } }, { limit: 25 })) {
    const typed: DeveloperCredential = key;
    out.push(typed.name);
  }
  for await (const page of svc.catalog.search.pages({ query: { q: 'rerank' } }, { maxPages: 2 })) {
    const rows: SearchRow[] = page.rows;
    out.push(...rows.map((row) => row.id), page.nextCursor ?? 'end');
  }
  for await (const post of svc.blackboard.watch({ key: 'demo:x', signal: AbortSignal.timeout(10) })) out.push(post.item.text);
  return out;
}
export const isSvcError = (error: unknown): boolean => SvcError.isInstance(error);
// @ts-expect-error a route that does not page has no .all()
svc.catalog.artifact.all;
`,
  );
  await writeFile(
    path.join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2023', noEmit: true, skipLibCheck: false, types: ['node'] },
      files: ['consumer.ts'],
    }),
  );
  const typecheck = await run(path.join(project, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], { cwd: project, timeoutMs: 180_000 });
  t.is(typecheck.code, 0, `${typecheck.stdout}\n${typecheck.stderr}`);
});

/** Most type instantiations `test/fixtures/typed-program.ts` may cost against the published declarations (measured: see docs/client.md). */
// Measured: 105.7k (check 6.0 s at load 18); 218.9k with the methods typed by ClientOf<Contract> alone.
const TYPED_PROGRAM_INSTANTIATIONS_CAP = 150_000;

test.serial("a typical program's type-check cost against the published declarations, and a method's type names its answer", async (t) => {
  t.timeout(300_000);
  const project = path.join(work, 'consumer');
  await cp(path.join(ROOT, 'test', 'fixtures', 'typed-program.ts'), path.join(project, 'typed-program.ts'));
  await writeFile(
    path.join(project, 'tsconfig.typed.json'),
    JSON.stringify({
      compilerOptions: { strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2023', noEmit: true, skipLibCheck: true, types: ['node'] },
      files: ['typed-program.ts'],
    }),
  );
  const load = loadavg()[0]!.toFixed(1);
  const checked = await run(path.join(project, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.typed.json', '--extendedDiagnostics'], {
    cwd: project,
    timeoutMs: 240_000,
  });
  t.is(checked.code, 0, checked.stdout);
  const figure = (name: string) =>
    /^\s*([\d.]+)/.exec(
      checked.stdout
        .split('\n')
        .find((line) => line.startsWith(`${name}:`))!
        .slice(name.length + 1),
    )![1]!;
  const instantiations = Number(figure('Instantiations'));
  t.log(`typed-program.ts: ${instantiations} instantiations, check time ${figure('Check time')} s, total ${figure('Total time')} s, at load ${load}`);
  t.true(instantiations < TYPED_PROGRAM_INSTANTIATIONS_CAP, `${instantiations} instantiations`);

  // What an editor shows on hover: the method's type through the compiler API, on the published .d.ts.
  await writeFile(
    path.join(project, 'hover.mjs'),
    `import ts from 'typescript';
const program = ts.createProgram(['typed-program.ts'], { strict: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2023, noEmit: true, types: ['node'] });
const checker = program.getTypeChecker();
const shown = {};
const visit = (node) => {
  if (ts.isPropertyAccessExpression(node) && /^svc\\.(blackboard\\.put|blackboard\\.getPost|catalog\\.search|blackboard)$/.test(node.getText())) {
    shown[node.getText()] = checker.typeToString(checker.getTypeAtLocation(node), undefined, ts.TypeFormatFlags.NoTruncation);
  }
  ts.forEachChild(node, visit);
};
visit(program.getSourceFile('typed-program.ts'));
process.stdout.write(JSON.stringify(shown));
`,
  );
  const hover = await run(process.execPath, ['hover.mjs'], { cwd: project, timeoutMs: 240_000 });
  t.is(hover.code, 0, hover.stderr);
  const shown = JSON.parse(hover.stdout) as Record<string, string>;
  t.is(shown['svc.blackboard.put'], '(request: BlackboardPutRequest, options?: CallOptions | undefined) => Promise<BlackboardPutResponse>');
  t.is(shown['svc.blackboard.getPost'], 'BlackboardGetPostMethod');
  t.is(shown['svc.catalog.search'], 'CatalogSearchMethod');
  t.is(shown['svc.blackboard'], 'FeatureClient<"blackboard">');
});

/**
 * Node.js 22, the oldest `engines` allows, from the npm registry's `node` package (cached under
 * node_modules/.cache): the only copy of it this lane needs.
 */
async function node22(): Promise<string> {
  const prefix = path.join(ROOT, 'node_modules', '.cache', 'svc-release-node22');
  const bin = path.join(prefix, 'node_modules', 'node', 'bin', 'node');
  if (!existsSync(bin)) {
    const installed = await run('npm', ['install', '--prefix', prefix, '--no-save', '--no-audit', '--no-fund', 'node@22'], { cwd: ROOT, timeoutMs: 300_000 });
    if (installed.code !== 0) throw new Error(`npm install node@22: ${installed.stderr}`);
  }
  return bin;
}

test.serial('on Node.js 22 and 24 the packed CLI and client download a file, post to the board and run a typed program', async (t) => {
  t.timeout(600_000);
  const project = path.join(work, 'consumer');
  const nodes = [await node22(), process.execPath];
  // Its own copy of the typed program: the test runs alone too (--match), not only after the type-check cost test.
  await cp(path.join(ROOT, 'test', 'fixtures', 'typed-program.ts'), path.join(project, 'typed-program.ts'));
  await writeFile(
    path.join(project, 'typed-run.ts'),
    `import { health, latest, post } from './typed-program.ts';
const created = await post('from the typed program on Node.js ' + process.versions.node);
process.stdout.write(JSON.stringify({ health: await health(), created: created.id, key: created.key, latest: await latest(created.key) }) + '\\n');
`,
  );
  const server = await startUntil(path.join(project, 'node_modules', '.bin', 'svc-server'), ['start'], {
    cwd: project,
    env: { SVC_PORT: '0', SVC_DATA_DIR: path.join(work, 'server-node-versions'), SVC_LOG_LEVEL: 'info' },
    timeoutMs: 120_000,
    match: (line) => line.includes('"svc listening"'),
  });
  try {
    const { baseUrl } = JSON.parse(server.line) as { baseUrl: string };
    const svcBin = path.join(project, 'node_modules', '@svc', 'cli', 'dist', 'bin.js');
    for (const node of nodes) {
      const version = (await run(node, ['--version'], { cwd: project, timeoutMs: 30_000 })).stdout.trim();
      const major = /^v(\d+)/.exec(version)![1]!;
      const env = { SVC_BASE_URL: baseUrl };
      const out = path.join(work, `download-node${major}`);
      const downloaded = await run(node, [svcBin, 'download', 'tiny-sentiment-lexicon', '--out', out, '--allow-http-loopback', '--json'], {
        cwd: project,
        timeoutMs: 120_000,
        env,
      });
      t.is(downloaded.code, 0, `${version}: ${downloaded.stderr}`);
      t.true((await readdir(out)).length > 0, `${version}: the download wrote its files`);
      const posted = await run(node, [svcBin, 'board', 'put', `posted on Node.js ${version}`, '--key', `release:node${major}`, '--json'], {
        cwd: project,
        timeoutMs: 60_000,
        env,
      });
      t.is(posted.code, 0, `${version}: ${posted.stderr}`);
      const read = await run(node, [svcBin, 'board', 'get', `release:node${major}`, '--json'], { cwd: project, timeoutMs: 60_000, env });
      t.is(read.code, 0, `${version}: ${read.stderr}`);
      t.regex(read.stdout, new RegExp(`posted on Node\\.js ${version.replace(/\./g, '\\.')}`));
      const typed = await run(node, ['typed-run.ts'], { cwd: project, timeoutMs: 60_000, env });
      t.is(typed.code, 0, `${version}: ${typed.stderr}`);
      const answer = JSON.parse(typed.stdout.trim().split('\n').at(-1)!) as { health: string; key: string; latest: string[] };
      t.is(answer.health, 'ok embedded', version);
      t.is(answer.key, 'typed-program:demo');
      t.true(
        answer.latest.some((line) => line.endsWith(`from the typed program on Node.js ${version.slice(1)}`)),
        `${version}: ${answer.latest.join(' | ')}`,
      );
      t.log(`${version}: download, board put/get and the typed program passed`);
    }
  } finally {
    t.is(await stop(server.child, 30_000), 0, server.output());
  }
});

test.serial('the svc bin runs, and svc-server starts from its tarball and serves the packed client and CLI', async (t) => {
  t.timeout(300_000);
  const project = path.join(work, 'consumer');
  // The bins as npm links them.
  const version = await run(path.join(project, 'node_modules', '.bin', 'svc'), ['version', '--json'], {
    cwd: project,
    timeoutMs: 60_000,
    env: { SVC_BASE_URL: 'http://127.0.0.1:9' },
  });
  t.regex(version.stdout, /"cli":\s*"\d+\.\d+\.\d+"/, version.stderr);
  // On a Node.js older than `engines` says, the bin names the version it needs, before its modules
  // fail to link (Node 20: a SyntaxError about worker_threads). Debian's own node is such a Node here.
  const systemNode = await run('/usr/bin/node', ['--version'], { cwd: project, timeoutMs: 30_000 }).catch(() => undefined);
  if (systemNode?.code === 0 && Number(/^v(\d+)/.exec(systemNode.stdout)?.[1]) < 22) {
    const old = await run('/usr/bin/node', [path.join(project, 'node_modules', '@svc', 'cli', 'dist', 'bin.js'), 'version'], {
      cwd: project,
      timeoutMs: 30_000,
    });
    t.is(old.code, 1, old.stderr);
    t.regex(old.stderr, /^error: svc needs Node\.js 22 or newer; this is Node\.js v\d+/);
    t.notRegex(old.stderr, /SyntaxError/);
  } else t.log(`no Node.js older than 22 at /usr/bin/node (${systemNode?.stdout.trim()}): the old-Node refusal is checked by cli-node-version.test.ts alone`);

  const dataDir = path.join(work, 'server-data');
  const server = await startUntil(path.join(project, 'node_modules', '.bin', 'svc-server'), ['start'], {
    cwd: project,
    env: { SVC_PORT: '0', SVC_DATA_DIR: dataDir, SVC_LOG_LEVEL: 'info' },
    timeoutMs: 120_000,
    match: (line) => line.includes('"svc listening"'),
  });
  try {
    const { baseUrl } = JSON.parse(server.line) as { baseUrl: string };
    t.regex(baseUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
    const called = await run(process.execPath, ['smoke.mjs', baseUrl], { cwd: project, timeoutMs: 60_000 });
    t.is(called.code, 0, called.stderr);
    t.deepEqual(JSON.parse(called.stdout.trim().split('\n')[1]!), { health: 'ok', searched: 5 });
    const health = await run(path.join(project, 'node_modules', '.bin', 'svc'), ['health', '--json'], {
      cwd: project,
      timeoutMs: 60_000,
      env: { SVC_BASE_URL: baseUrl },
    });
    t.is(health.code, 0, health.stderr);
    t.like(JSON.parse(health.stdout), { status: 'ok', database: { kind: 'embedded' } });
    // The installed server finds its console (dist/ walks up to console/) and serves it.
    const page = await fetch(`${baseUrl}/ui/`);
    t.is(page.status, 200);
    t.regex(await page.text(), /<script type="module" crossorigin src="\/ui\/assets\/index-[\w-]+\.js">/);
  } finally {
    t.is(await stop(server.child, 30_000), 0, server.output());
  }
});

// Worker threads load their modules by file name, which only the built layout can break: before
// the workers were tsup entries, this server answered every PDF with 503 pdf_worker_unavailable
// and died on its first validate_json item (ERR_MODULE_NOT_FOUND for a .ts file next to dist/).
test.serial(
  'svc-server from its tarball runs its worker threads: a PDF extracted, a DOCX converted, validate_json and calculate jobs answered, the OpenAPI and x402 documents built',
  async (t) => {
    t.timeout(300_000);
    const project = path.join(work, 'consumer');
    await writeFile(path.join(project, 'small.pdf'), textPdf([['Extracted by the published build.'], ['Second page.']]));
    await writeFile(
      path.join(project, 'small.docx'),
      docxFile([
        ['Heading1', 'Published'],
        [null, 'Converted in a worker thread.'],
      ]),
    );
    await writeFile(
      path.join(project, 'workers.mjs'),
      `import { createClient } from '@svc/client';
const svc = createClient({ baseUrl: process.argv[2], token: process.env.SVC_TOKEN });
const pdf = await svc.pdf.extractFile('small.pdf');
const docx = await svc.documents.extractFile('small.docx');
// submit sends the Idempotency-Key; wait polls GET /v1/jobs/{id} until the job ends.
const submitted = await svc.jobs.submit(
  { schema: 'svc.batch-job-request.v1', operation: 'validate_json', items: [
    { schema: { type: 'object', properties: { id: { type: 'string', pattern: '^[a-z]+$' } }, required: ['id'] }, document: { id: 'abc' } },
    { schema: { type: 'integer', minimum: 10 }, document: 3 },
  ] },
  { idempotencyKey: 'tarball-validate-json' },
);
const done = await svc.jobs.wait(submitted.job_id, { signal: AbortSignal.timeout(60_000) });
const result = await svc.jobs.result({ params: { job_id: done.job_id } });
const calculated = await svc.jobs.submit({ schema: 'svc.batch-job-request.v1', operation: 'calculate', items: [{ expression: '6 * 7' }] }, { idempotencyKey: 'tarball-calculate' });
const calculation = await svc.jobs.result({ params: { job_id: (await svc.jobs.wait(calculated.job_id, { signal: AbortSignal.timeout(60_000) })).job_id } });
const openapi = await (await fetch(new URL('/openapi.json', process.argv[2]))).json();
const x402 = await (await fetch(new URL('/.well-known/x402', process.argv[2]))).json();
process.stdout.write(JSON.stringify({ pdf, docx, done, result, calculation: calculation.items, openapi: openapi.openapi, x402: x402.asset_name }) + '\\n');
`,
    );
    const token = 'tarball-operator-token-0123456789';
    const server = await startUntil(path.join(project, 'node_modules', '.bin', 'svc-server'), ['start'], {
      cwd: project,
      env: { SVC_PORT: '0', SVC_DATA_DIR: path.join(work, 'server-workers-data'), SVC_LOG_LEVEL: 'info', SVC_OPERATOR_TOKEN: token },
      timeoutMs: 120_000,
      match: (line) => line.includes('"svc listening"'),
    });
    try {
      const { baseUrl } = JSON.parse(server.line) as { baseUrl: string };
      const called = await run(process.execPath, ['workers.mjs', baseUrl], { cwd: project, timeoutMs: 120_000, env: { SVC_TOKEN: token } });
      t.is(called.code, 0, `${called.stderr}\n${server.output()}`);
      const { pdf, docx, done, result, calculation, openapi, x402 } = JSON.parse(called.stdout) as {
        calculation: unknown;
        openapi: string;
        x402: string;
        pdf: { engine: string; page_count: number; pages: Array<{ page_number: number; text: string }> };
        docx: { format: string; sections: Array<{ heading: string | null; level: number; text: string }> };
        done: { status: string; progress: { total: number; succeeded: number; failed: number } };
        result: { items: Array<{ index: number; status: string; result: { valid: boolean; errors: Array<{ keyword: string; instance_path: string }> } }> };
      };
      t.is(pdf.engine, 'pdfium');
      t.is(pdf.page_count, 2);
      t.deepEqual(
        pdf.pages.map((page) => [page.page_number, page.text]),
        [
          [1, 'Extracted by the published build.'],
          [2, 'Second page.'],
        ],
      );
      t.is(docx.format, 'docx');
      t.deepEqual(
        docx.sections.map((section) => [section.heading, section.level, section.text]),
        [['Published', 1, 'Converted in a worker thread.']],
      );
      t.like(done, { status: 'completed', progress: { total: 2, succeeded: 2, failed: 0 } });
      t.deepEqual(
        result.items.map((item) => [item.index, item.status, item.result.valid, item.result.errors.map((error) => error.keyword)]),
        [
          [0, 'succeeded', true, []],
          [1, 'succeeded', false, ['minimum']],
        ],
      );
      t.like(calculation, [{ index: 0, status: 'succeeded', result: { value: 42 } }]);
      t.is(openapi, '3.1.1');
      t.is(x402, 'USDC');
    } finally {
      t.is(await stop(server.child, 30_000), 0, server.output());
    }
  },
);

test.serial('changeset version bumps the four packages together and a publish dry run packs them, on a copy', async (t) => {
  t.timeout(300_000);
  const copy = path.join(work, 'release');
  // What a release needs: the workspace files, the changesets and each package's manifest and built files.
  for (const entry of ['package.json', 'pnpm-workspace.yaml', '.changeset']) await cp(path.join(ROOT, entry), path.join(copy, entry), { recursive: true });
  for (const name of PACKAGES) {
    for (const entry of ['package.json', 'README.md', 'dist', ...(name === 'server' ? ['assets'] : [])]) {
      await cp(path.join(ROOT, 'packages', name, entry), path.join(copy, 'packages', name, entry), { recursive: true });
    }
  }
  for (const example of await readdir(path.join(ROOT, 'examples'))) {
    await cp(path.join(ROOT, 'examples', example, 'package.json'), path.join(copy, 'examples', example, 'package.json'));
  }
  // The examples' tests use the private test kit: its manifest completes the workspace.
  await cp(path.join(ROOT, 'packages', 'testing', 'package.json'), path.join(copy, 'packages', 'testing', 'package.json'));
  const before = (await manifestOf('client')).version as string;
  const changesets = (await readdir(path.join(copy, '.changeset'))).filter((file) => file.endsWith('.md') && file !== 'README.md');
  t.true(changesets.length > 0, 'there are changesets to release');

  const version = await run(path.join(ROOT, 'node_modules', '.bin', 'changeset'), ['version'], { cwd: copy, timeoutMs: 120_000 });
  t.is(version.code, 0, `${version.stdout}\n${version.stderr}`);
  const bumped = await Promise.all(
    PACKAGES.map(async (name) => JSON.parse(await readFile(path.join(copy, 'packages', name, 'package.json'), 'utf8')) as { version: string }),
  );
  const versions = new Set(bumped.map((manifest) => manifest.version));
  t.is(versions.size, 1, 'the four packages are one fixed group');
  const [next] = versions;
  t.not(next, before);
  t.regex(await readFile(path.join(copy, 'packages', 'client', 'CHANGELOG.md'), 'utf8'), new RegExp(`## ${next!.replace(/\./g, '\\.')}`));
  t.deepEqual(
    (await readdir(path.join(copy, '.changeset'))).filter((file) => file.endsWith('.md') && file !== 'README.md'),
    [],
    'the changesets were consumed',
  );
  const example = JSON.parse(await readFile(path.join(copy, 'examples', 'quickstart', 'package.json'), 'utf8')) as { version?: string };
  t.is(example.version, undefined, 'private examples are never versioned');

  // --ignore-scripts: the copy has no node_modules to build with; dist was built when the tarballs were packed.
  const publish = await run('pnpm', ['publish', '-r', '--dry-run', '--no-git-checks', '--ignore-scripts', '--access', 'public'], {
    cwd: copy,
    timeoutMs: 180_000,
  });
  t.is(publish.code, 0, `${publish.stdout}\n${publish.stderr}`);
  for (const name of PACKAGES)
    t.regex(`${publish.stdout}\n${publish.stderr}`, new RegExp(`@svc/${name}@${next!.replace(/\./g, '\\.')}`), `${name} would be published`);
  t.notRegex(`${publish.stdout}\n${publish.stderr}`, /@example\//, 'examples are never published');
  t.notRegex(`${publish.stdout}\n${publish.stderr}`, /@svc\/testing/, 'the test kit is never published');
  t.is((await manifestOf('client')).version, before, 'this checkout keeps its version');
});
