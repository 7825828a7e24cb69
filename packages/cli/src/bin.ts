#!/usr/bin/env node
import { endQuietlyOnClosedPipe } from './closed-pipe.ts';
import { unsupportedNode } from './node-version.ts';

// The version is checked before the CLI's modules load: they do not link on an older Node.js.
const unsupported = unsupportedNode(process.versions.node);
if (unsupported) {
  process.stderr.write(`error: ${unsupported}\n`);
  process.exit(1);
}
endQuietlyOnClosedPipe(process.stdout);
endQuietlyOnClosedPipe(process.stderr);
const { main } = await import('./program.ts');
process.exitCode = await main(process.argv);
