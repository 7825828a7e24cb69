/**
 * Loaded into the measured `svc-server` process by bench/memory.ts (`node --import`): answers
 * the bench's IPC message `'memory'` with the main thread's `process.memoryUsage()` and the size
 * of every WebAssembly memory created on the main thread (PGlite's; the PDF workers' live on
 * their own threads). It only watches: the constructor it wraps builds the same memory.
 */
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

if (process.send) {
  process.on('message', (message) => {
    if (message !== 'memory') return;
    const wasmMemoryBytes = memories.map((reference) => reference.deref()?.buffer.byteLength).filter((bytes): bytes is number => bytes !== undefined);
    const answer: ProbeAnswer = { usage: process.memoryUsage(), wasmMemoryBytes };
    process.send!(answer);
  });
  // The channel must not keep the server alive, nor change how it exits.
  process.channel?.unref();
}
