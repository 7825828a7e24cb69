import { readFileSync } from 'node:fs';
import { access, mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The installed PGlite's version (its package.json is not exported, so it is found beside its entry). */
function pgliteVersion(): string {
  let directory = path.dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
  while (path.basename(directory) !== 'pglite' && path.dirname(directory) !== directory) directory = path.dirname(directory);
  return (JSON.parse(readFileSync(path.join(directory, 'package.json'), 'utf8')) as { version: string }).version;
}
const PGLITE_VERSION = pgliteVersion();

/**
 * A freshly initialised PGlite cluster, dumped once (at install time) and unpacked into every
 * new data directory. initdb inside WASM costs about 4.5 s of CPU, which is what the template
 * saves a first start (bench/cold-start). The file is tied to the PGlite version that made it,
 * and a missing or stale one only means the slow path.
 */
export const templateFile = fileURLToPath(new URL(`../../assets/pglite-${PGLITE_VERSION}.tar.gz`, import.meta.url));

/**
 * The template with svc's migrations applied, made at install time after the plain one, for
 * migrations whose fingerprint (migrations/fingerprint.ts) is `fingerprint`. A new data directory
 * of `svc-server start` starts from it when it matches: the migrations' DDL costs the embedded
 * database about 0.7 s of CPU on a first start, and their rows say when the template was made.
 */
export const migratedTemplateFile = (fingerprint: string) =>
  fileURLToPath(new URL(`../../assets/pglite-${PGLITE_VERSION}-migrated-${fingerprint}.tar.gz`, import.meta.url));

/** Migrated templates made for other migrations than `fingerprint`: left over, to remove. */
export async function otherMigratedTemplates(fingerprint: string): Promise<string[]> {
  const directory = path.dirname(templateFile);
  const prefix = `pglite-${PGLITE_VERSION}-migrated-`;
  return (await readdir(directory))
    .filter((name) => name.startsWith(prefix) && name !== path.basename(migratedTemplateFile(fingerprint)))
    .map((name) => path.join(directory, name));
}

/**
 * Unpacks the first of `files` that exists into `directory` (which must not hold a cluster yet)
 * and answers whether there was one. Written by node-tar entry by entry: PGlite's own
 * `loadDataDir` holds the 4.5 MB tarball, its 40 MB of tar and a copy of every file in memory at
 * once, which stayed in the server's resident set until a garbage collection that an idle server
 * may never run.
 * Unpacked beside the directory and renamed into place, so a start cut short leaves no half
 * cluster that the next one would take for a complete one.
 */
export async function unpackTemplate(directory: string, files = [templateFile]): Promise<boolean> {
  const file = await firstPresent(files);
  if (!file) return false;
  const unpacking = `${directory}.unpacking-${process.pid}`;
  await rm(unpacking, { recursive: true, force: true });
  await mkdir(unpacking, { recursive: true, mode: 0o700 });
  try {
    // The dump names its entries from the root ("/base/1/..."): node-tar puts them under
    // `unpacking` and says so (TAR_ENTRY_INFO); any other warning is an entry it could not write.
    // Synchronous: about twice as fast as node-tar's asynchronous mode on a thousand small files
    // (250 to 560 ms against 720 to 1100, bench/cold-start), and the process that unpacks (the
    // embedded database's `prepare` step) has nothing else to do meanwhile.
    const problems: string[] = [];
    // node-tar is imported here, not with this module: a database process that reopens an
    // existing data directory never unpacks.
    const { extract } = await import('tar');
    extract({
      file,
      cwd: unpacking,
      preservePaths: false,
      sync: true,
      onwarn: (code, message) => code !== 'TAR_ENTRY_INFO' && problems.push(`${code}: ${message}`),
    });
    if (problems.length > 0) throw new Error(`The embedded database template ${file} did not unpack: ${problems.slice(0, 3).join('; ')}`);
    await access(path.join(unpacking, 'PG_VERSION'));
    await rename(unpacking, directory);
  } catch (error) {
    await rm(unpacking, { recursive: true, force: true });
    throw error;
  }
  return true;
}

async function firstPresent(files: readonly string[]): Promise<string | undefined> {
  for (const file of files) {
    if (
      await access(file).then(
        () => true,
        () => false,
      )
    )
      return file;
  }
  return undefined;
}

export async function buildTemplate(file = templateFile): Promise<{ file: string; created: boolean }> {
  try {
    await access(file);
    return { file, created: false };
  } catch {
    // Not there yet: make it.
  }
  const { PGlite } = await import('@electric-sql/pglite');
  const db = await PGlite.create();
  try {
    const dump = await db.dumpDataDir('gzip');
    await mkdir(path.dirname(file), { recursive: true });
    const partial = `${file}.${process.pid}.partial`;
    await writeFile(partial, Buffer.from(await dump.arrayBuffer()));
    await rename(partial, file);
  } finally {
    await db.close();
  }
  return { file, created: true };
}

/**
 * Makes the migrated template for `fingerprint` (unless present): a new data directory from the
 * plain template, `applyMigrations` run on it (the server's own migration run), closed cleanly,
 * then packed. Migrated templates made for other migrations are removed.
 */
export async function buildMigratedTemplate(
  fingerprint: string,
  applyMigrations: (dataDir: string) => Promise<void>,
): Promise<{ file: string; created: boolean }> {
  const file = migratedTemplateFile(fingerprint);
  for (const other of await otherMigratedTemplates(fingerprint)) await rm(other, { force: true });
  if (await firstPresent([file])) return { file, created: false };
  const dataDir = await mkdtemp(path.join(tmpdir(), 'svc-migrated-template-'));
  try {
    await applyMigrations(dataDir);
    const { create } = await import('tar');
    const partial = `${file}.${process.pid}.partial`;
    await create({ gzip: true, file: partial, cwd: path.join(dataDir, 'pgdata'), portable: true }, ['.']);
    await rename(partial, file);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
  return { file, created: true };
}
