// Entry of the builder, trainer and ingest worker threads: imports the real entry named in
// workerData.entry (a file: URL of a .ts module) from dist/ or through tsx (load-entry.mjs).
// workerData.niceness, when given, lowers this thread's CPU priority first (Linux: setpriority
// on the thread id applies to that thread only; elsewhere it is skipped).
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { workerData } from 'node:worker_threads';
import { importEntry } from './load-entry.mjs';

if (workerData.niceness) {
  try {
    setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), workerData.niceness);
  } catch {
    // Not Linux: the thread keeps the process's priority.
  }
}

await importEntry(workerData.entry);
