import { readFileSync } from 'node:fs';
import { access, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';

/** The installed PGlite's version (its package.json is not exported, so it is found beside its entry). */
function pgliteVersion(): string {
  let directory = path.dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
  while (path.basename(directory) !== 'pglite' && path.dirname(directory) !== directory) directory = path.dirname(directory);
  return (JSON.parse(readFileSync(path.join(directory, 'package.json'), 'utf8')) as { version: string }).version;
}
const PGLITE_VERSION = pgliteVersion();

/**
 * A freshly initialised PGlite cluster, dumped once (at install time) and unpacked into every
 * new data directory. initdb inside WASM costs about 4.5 s of CPU; unpacking the template about
 * 1.8 s, which is what keeps a first start under 3 s (bench/cold-start). The file is tied to the
 * PGlite version that made it, and a missing or stale one only means the slow path.
 */
export const templateFile = fileURLToPath(new URL(`../../assets/pglite-${PGLITE_VERSION}.tar.gz`, import.meta.url));

export async function loadTemplate(file = templateFile): Promise<Blob | undefined> {
  try {
    return new Blob([await readFile(file)]);
  } catch {
    return undefined;
  }
}

export async function buildTemplate(file = templateFile): Promise<{ file: string; created: boolean }> {
  try {
    await access(file);
    return { file, created: false };
  } catch {
    // Not there yet: make it.
  }
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
