import { unlinkSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Makes this process the only one with the embedded database open: `file` holds the pid of the
 * process that has it. A holder that is gone (crashed) leaves the file behind and is ignored; a
 * live one is waited for up to `waitMs`. The wait matters after a server is killed: its database
 * process ends when it notices (its IPC channel closes), which a long statement may delay, and a
 * server started at once on the same directory must not open the files beside it. Answers the
 * release, which is synchronous so that it can run on the way out of a dying process.
 */
export async function lockDataDirectory(file: string, waitMs = 30_000): Promise<() => void> {
  const deadline = performance.now() + waitMs;
  let unreadable = 0;
  for (;;) {
    try {
      await writeFile(file, String(process.pid), { flag: 'wx', mode: 0o600 });
      return () => {
        try {
          unlinkSync(file);
        } catch {
          // Already gone: nothing to give up.
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = Number(await readFile(file, 'utf8').catch(() => ''));
    // Empty for a moment while its holder writes it; empty for a second, it is a leftover.
    const written = Number.isInteger(holder) && holder > 0;
    if (!written && ++unreadable < 20) {
      await sleep(50);
      continue;
    }
    if (!written || !alive(holder)) {
      await rm(file, { force: true });
      unreadable = 0;
      continue;
    }
    if (performance.now() > deadline) throw new Error(`The embedded database is in use by process ${holder} (${file}); stop that server first.`);
    await sleep(50);
  }
}
