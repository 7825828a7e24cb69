#!/usr/bin/env node
import { main } from './program.ts';
import { endQuietlyOnClosedPipe } from './closed-pipe.ts';

endQuietlyOnClosedPipe(process.stdout);
endQuietlyOnClosedPipe(process.stderr);
process.exitCode = await main(process.argv);
