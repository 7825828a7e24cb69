import { mkdir, rmdir } from 'node:fs/promises';
import path from 'node:path';

/** Removes `directory` and its parents up to `top` while they are empty; a non-empty one stops the walk. */
export async function removeEmptyDirectories(directory: string, top: string): Promise<void> {
  for (let current = directory; current.startsWith(top); current = path.dirname(current)) {
    try {
      await rmdir(current);
    } catch {
      return;
    }
    if (current === top) return;
  }
}

/**
 * Makes the destination's directory (the partial's lock lives in it, so it is made first) and
 * answers how to undo that: a failed download leaves no empty directory behind. Directories a
 * caller shares between files (`shared`, downloadArtifact's) are reported there instead of
 * removed; it prunes them once every file is done.
 */
export async function makeDestinationDirectory(destination: string, shared: Set<string> | undefined): Promise<() => Promise<void>> {
  // The first directory mkdir had to create, if any.
  const created = await mkdir(path.dirname(destination), { recursive: true });
  if (created) shared?.add(created);
  return async () => {
    if (created && !shared) await removeEmptyDirectories(path.dirname(destination), created);
  };
}
