// Entry of the builder, trainer and ingest worker threads: imports the real entry named in
// workerData.entry (a file: URL of a .ts module) from dist/ or through tsx (load-entry.mjs).
import { workerData } from 'node:worker_threads';
import { importEntry } from './load-entry.mjs';

await importEntry(workerData.entry);
