/**
 * Loaded into the measured `svc-server` process by bench/memory.ts (`node --import`): on
 * SIGUSR2 it writes the main thread's `process.memoryUsage()` and the size of every WebAssembly
 * memory created on the main thread to the file named by SVC_MEMORY_PROBE_FILE. A signal and a
 * file, not an IPC channel: svc-server replaces itself at start (bin.ts, with its V8 flags),
 * which keeps its pid, environment and this module, but would close such a channel. It only
 * watches: the constructor it wraps builds the same memory.
 */
import { renameSync, writeFileSync } from 'node:fs';

const memories: Array<WeakRef<WebAssembly.Memory>> = [];
const NativeMemory = WebAssembly.Memory;
WebAssembly.Memory = new Proxy(NativeMemory, {
  construct(target, args, newTarget) {
    const memory = Reflect.construct(target, args, newTarget) as WebAssembly.Memory;
    memories.push(new WeakRef(memory));
    return memory;
  },
});

export interface ProbeAnswer {
  usage: NodeJS.MemoryUsage;
  /** Byte length of each live WebAssembly memory made on the main thread. */
  wasmMemoryBytes: number[];
}

const file = process.env.SVC_MEMORY_PROBE_FILE;
if (file) {
  process.on('SIGUSR2', () => {
    const wasmMemoryBytes = memories.map((reference) => reference.deref()?.buffer.byteLength).filter((bytes): bytes is number => bytes !== undefined);
    const answer: ProbeAnswer = { usage: process.memoryUsage(), wasmMemoryBytes };
    writeFileSync(`${file}.partial`, JSON.stringify(answer));
    renameSync(`${file}.partial`, file);
  });
}
