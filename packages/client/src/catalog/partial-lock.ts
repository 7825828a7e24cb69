import { link, open, readFile, rename, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { partialFiles } from './local-files.ts';

/** Who holds a partial file: written into its lock so a second download can name it and tell whether it still runs. */
export interface LockHolder {
  pid: number;
  host: string;
  /** When the lock was taken (ISO 8601). */
  since: string;
}

/** The lock beside a destination's partial file: `.<name>.svc-partial.lock`. */
export function partialLockFile(destination: string): string {
  return `${partialFiles(destination).partial}.lock`;
}

/** Another download (this process or another) writes this destination's partial file now. */
export class PartialInUseError extends Error {
  readonly holder: LockHolder | undefined;
  readonly lockFile: string;
  constructor(lockFile: string, holder: LockHolder | undefined) {
    super(
      holder
        ? `another download (pid ${holder.pid} on ${holder.host}, since ${holder.since}) is writing this file; run again once it ends${holder.host === hostname() ? '' : `, or remove ${lockFile} if that process is gone`}`
        : `another download is writing this file; run again once it ends, or remove ${lockFile} if no download runs`,
    );
    this.holder = holder;
    this.lockFile = lockFile;
  }
}

/** Whether a process of this host still runs (EPERM: it runs under another user). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const readHolder = (file: string): Promise<LockHolder | undefined> =>
  readFile(file, 'utf8').then(
    (text) => {
      const value = JSON.parse(text) as Partial<LockHolder>;
      return typeof value.pid === 'number' && typeof value.host === 'string' ? (value as LockHolder) : undefined;
    },
    () => undefined,
  );

/** Locks held by this process, so a second call for the same destination here is refused too (a pid check would let it in). */
const heldHere = new Set<string>();

/**
 * Takes the lock on a destination's partial file before anything reads or writes the partial:
 * two downloads of one file into one folder would otherwise both append to the same partial (the
 * second resumes from the first's length while the first still writes), and the bytes published
 * would be a mix. The lock is a file created with O_EXCL holding the pid, host and time; the
 * second download is refused with PartialInUseError naming them, and changes nothing.
 *
 * A lock whose process no longer runs on this host (a kill -9, a crash) is taken over: renamed
 * aside first, so of two downloads that both found it stale only one takes it; if the renamed
 * lock turns out to be a live one (taken in between), it is linked back and this call refused.
 * A lock of another host (a shared folder) is never taken over: the message says which file to
 * remove once that process is gone.
 *
 * Answers the release, which removes the lock (call it in a `finally`).
 */
export async function lockPartial(destination: string): Promise<() => Promise<void>> {
  const lockFile = partialLockFile(destination);
  const mine: LockHolder = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt += 1) {
    if (heldHere.has(lockFile)) throw new PartialInUseError(lockFile, await readHolder(lockFile));
    try {
      const handle = await open(lockFile, 'wx', 0o644);
      try {
        await handle.writeFile(`${JSON.stringify(mine)}\n`);
      } finally {
        await handle.close();
      }
      heldHere.add(lockFile);
      return async () => {
        heldHere.delete(lockFile);
        await rm(lockFile, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = await readHolder(lockFile);
    // A lock being written (no holder readable yet) or of another host is someone else's.
    if (!holder || holder.host !== mine.host || running(holder.pid)) throw new PartialInUseError(lockFile, holder);
    const aside = `${lockFile}.${process.pid}.stale`;
    try {
      await rename(lockFile, aside);
    } catch {
      continue; // another download moved it first: try to take it again
    }
    const moved = await readHolder(aside);
    if (moved && (moved.host !== mine.host || running(moved.pid))) {
      // A live download took the lock between our read and our rename: give it back.
      await link(aside, lockFile).catch(() => {});
      await rm(aside, { force: true });
      throw new PartialInUseError(lockFile, moved);
    }
    await rm(aside, { force: true });
  }
  throw new PartialInUseError(lockFile, await readHolder(lockFile));
}
