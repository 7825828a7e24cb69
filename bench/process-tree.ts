import { readdirSync, readFileSync } from 'node:fs';

/** A process and its descendants (the embedded database runs in a child process of the server). */
export function processTree(pid: number): number[] {
  let children: number[] = [];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      children.push(...readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(/\s+/).filter(Boolean).map(Number));
    }
  } catch {
    children = [];
  }
  return [pid, ...children.flatMap(processTree)];
}

/** Resident memory (VmRSS) of a process and its descendants, summed, in MiB; a process that ended counts 0. */
export function treeResidentMiB(pid: number): number {
  let kib = 0;
  for (const member of processTree(pid)) {
    try {
      kib += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${member}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      // ended between the listing and the read
    }
  }
  return kib / 1024;
}
