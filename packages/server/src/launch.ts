import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * V8 settings of the server's process on the embedded database, which only its command line can
 * give. `--max-semi-space-size=16`: V8 sizes the young generation from the machine's memory, and
 * on a 24 GiB machine lets each of its two semi-spaces grow to 64 MiB; loading the server's
 * modules alone fills them, and that new space stays resident. 16 MiB per semi-space was V8's
 * own default before it sized them from memory, and still allows a scavenge per 16 MiB of
 * short-lived objects. The embedded database is for trying and small single-node use, where
 * memory counts most; with PostgreSQL (production) V8 keeps its own sizing, which trades memory
 * for fewer scavenges.
 */
export const EMBEDDED_V8_FLAGS = ['--max-semi-space-size=16'];

/**
 * glibc's allocator gives each thread that allocates its own arena (up to 8 per core), and
 * memory freed in one is not reused by the others: V8's background compiler and GC threads and
 * libuv's pool leave pieces in each. Two arenas, on the embedded database (where memory counts
 * most): about 8 MiB less resident at idle (bench:memory). Other C libraries ignore it.
 */
export const EMBEDDED_MALLOC_ARENAS = '2';

/**
 * Node's compile cache (the default directory of `module.enableCompileCache()`), given to the
 * process from its start so that it also covers bin.ts itself: with every module's stripped
 * TypeScript and code in the cache, Node never loads its TypeScript stripper (amaro, 17 MiB
 * resident in each process, measured), and starts faster. Node checks every entry against the
 * source it was made from; a stale or missing one is made again.
 */
export const COMPILE_CACHE_DIRECTORY = path.join(tmpdir(), 'node-compile-cache');

const flagName = (flag: string) => flag.split('=')[0]!.replace(/_/g, '-');

export interface Relaunch {
  /** The arguments after the node binary. */
  args: string[];
  env: NodeJS.ProcessEnv;
}

/**
 * How to re-run this command with the compile cache and, on the embedded database (no
 * DATABASE_URL), `EMBEDDED_V8_FLAGS` and `EMBEDDED_MALLOC_ARENAS`, or undefined when it already
 * has them. Settings the user gave otherwise (the same flag on the command line or in
 * NODE_OPTIONS, NODE_COMPILE_CACHE, NODE_DISABLE_COMPILE_CACHE, MALLOC_ARENA_MAX) are left as they
 * are.
 */
export function relaunch(execArgv: readonly string[], argv: readonly string[], env: NodeJS.ProcessEnv): Relaunch | undefined {
  const given = new Set([...execArgv, ...(env.NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean)].map(flagName));
  const flags = env.DATABASE_URL ? [] : EMBEDDED_V8_FLAGS;
  const missing = flags.filter((flag) => !given.has(flagName(flag)));
  const cache = env.NODE_COMPILE_CACHE === undefined && env.NODE_DISABLE_COMPILE_CACHE === undefined;
  const arenas = !env.DATABASE_URL && env.MALLOC_ARENA_MAX === undefined;
  if (missing.length === 0 && !cache && !arenas) return undefined;
  return {
    args: [...missing, ...execArgv, ...argv],
    env: { ...env, ...(cache ? { NODE_COMPILE_CACHE: COMPILE_CACHE_DIRECTORY } : {}), ...(arenas ? { MALLOC_ARENA_MAX: EMBEDDED_MALLOC_ARENAS } : {}) },
  };
}
