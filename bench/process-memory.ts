/**
 * What a process tree holds in memory, read from Linux's /proc (bench/memory.ts): resident set
 * and its peak per process, the tree under a process, physical pages resident counted once, and
 * the resident part of WebAssembly memories.
 */
import { closeSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';

const MiB = 1024 * 1024;
const PAGE = 4096;

/** VmRSS and VmHWM of a process, in bytes (undefined once it is gone). */
export function status(pid: number): { rss: number; hwm: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(text)?.[1] ?? 0) * 1024;
    return { rss: kib('VmRSS'), hwm: kib('VmHWM') };
  } catch {
    return undefined;
  }
}

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

/**
 * Physical memory resident in the processes, each page counted once however many of them map
 * it (the node binary's pages are the same for the server and its database process): the page
 * frame numbers in /proc/<pid>/pagemap, which only root may read. Undefined without them.
 */
export function uniqueResidentBytes(pids: number[]): number | undefined {
  const frames = new Set<number>();
  for (const pid of pids) {
    const mappings = readFileSync(`/proc/${pid}/smaps`, 'utf8').split(/\n(?=[0-9a-f]+-[0-9a-f]+ )/);
    const pagemap = openSync(`/proc/${pid}/pagemap`, 'r');
    try {
      for (const mapping of mappings) {
        if (Number(/\nRss:\s+(\d+)/.exec(mapping)?.[1] ?? 0) === 0) continue;
        const [start, end] = mapping
          .split(' ')[0]!
          .split('-')
          .map((hex) => parseInt(hex, 16));
        const entries = Buffer.alloc(((end! - start!) / PAGE) * 8);
        readSync(pagemap, entries, 0, entries.length, (start! / PAGE) * 8);
        for (let offset = 0; offset < entries.length; offset += 8) {
          const entry = entries.readBigUInt64LE(offset);
          if (!(entry >> 63n)) continue;
          const frame = Number(entry & ((1n << 55n) - 1n));
          if (frame === 0) return undefined;
          frames.add(frame);
        }
      }
    } finally {
      closeSync(pagemap);
    }
  }
  return frames.size * PAGE;
}

/**
 * Resident bytes of the process's WebAssembly memories (all threads): V8 reserves each one as
 * an accessible anonymous mapping followed by a guard region of gigabytes, which nothing else in
 * a Node process has.
 */
export function wasmResidentBytes(pid: number): number {
  const mappings = readFileSync(`/proc/${pid}/smaps`, 'utf8').split(/\n(?=[0-9a-f]+-[0-9a-f]+ )/);
  let total = 0;
  for (let index = 0; index + 1 < mappings.length; index++) {
    const [range, permissions, , , inode] = mappings[index]!.split(/\s+/);
    const [nextRange, nextPermissions] = mappings[index + 1]!.split(/\s+/);
    const end = parseInt(range!.split('-')[1]!, 16);
    const [nextStart, nextEnd] = nextRange!.split('-').map((hex) => parseInt(hex, 16));
    if (permissions !== 'rw-p' || inode !== '0' || nextPermissions !== '---p' || nextStart !== end || nextEnd! - nextStart! < 4 * 1024 * MiB) continue;
    total += Number(/\nRss:\s+(\d+)/.exec(mappings[index]!)?.[1] ?? 0) * 1024;
  }
  return total;
}
