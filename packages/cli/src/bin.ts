#!/usr/bin/env node
import nodeModule from 'node:module';
import { cliVersion } from './cli-version.ts';
import { endQuietlyOnClosedPipe } from './closed-pipe.ts';
import { unsupportedNode } from './node-version.ts';

// The version is checked before the CLI's modules load: they do not link on an older Node.js.
const unsupported = unsupportedNode(process.versions.node);
if (unsupported) {
  process.stderr.write(`error: ${unsupported}\n`);
  process.exit(1);
}
// Compiled modules (and, on Node 24, TypeScript stripped to JavaScript) are cached on disk between
// runs: the second `svc` of a session starts without compiling its modules again (start-up, issue 44).
// Read off the default export: Node.js 20 has no such export, and its refusal above must still print.
nodeModule.enableCompileCache?.();
endQuietlyOnClosedPipe(process.stdout);
endQuietlyOnClosedPipe(process.stderr);
// `svc --version` alone answers here, before the program (and the whole contract) is imported.
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-v')) {
  process.stdout.write(`${cliVersion()}\n`);
} else {
  const { main } = await import('./program.ts');
  process.exitCode = await main(process.argv);
}
