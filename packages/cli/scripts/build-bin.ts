/**
 * Builds the published bin, dist/bin.js, bundled (scripts/bin-build.ts says why). Run by the
 * package's build after tsup, whose library build cleans dist first.
 *
 * Run: pnpm --filter @svc/cli build (or: node scripts/build-bin.ts after tsup)
 */
import { fileURLToPath } from 'node:url';
import { build } from 'tsup';
import { binBuildOptions } from './bin-build.ts';

await build({ ...binBuildOptions(fileURLToPath(new URL('../dist', import.meta.url))), config: false });
