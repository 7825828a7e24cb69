import { parentPort, workerData } from 'node:worker_threads';
import { buildDiscoveryDocuments } from './documents.ts';

// One build per thread: the thread answers and ends (worker-once.ts).
parentPort!.postMessage(buildDiscoveryDocuments(workerData as { baseUrl: string; apiUrl: string }));
