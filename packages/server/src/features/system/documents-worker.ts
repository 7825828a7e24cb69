import { parentPort, workerData } from 'node:worker_threads';
import { buildDiscoveryDocuments, type DocumentUrls } from './documents.ts';

// One build per thread: the thread answers and ends (worker-once.ts).
parentPort!.postMessage(buildDiscoveryDocuments(workerData as DocumentUrls));
