import { parentPort, workerData } from 'node:worker_threads';
import { x402Defaults } from './x402-config.ts';

// Loads @x402/evm and viem in this thread only, answers, and ends (worker-once.ts).
parentPort!.postMessage(x402Defaults(workerData as string));
