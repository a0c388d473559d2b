// Entry of the builder, trainer and ingest worker threads: imports the real entry named in
// workerData.entry (a file: URL of a .ts module) from dist/ or through tsx (load-entry.mjs).
// workerData.niceness, when given, lowers this thread's CPU priority first (Linux: setpriority
// on the thread id applies to that thread only; elsewhere it is skipped). workerData.idle puts
// the thread in Linux's SCHED_IDLE class besides (thread-class.mjs): p99 at 4 connections beside
// a model rebuild, 100,000 items on one core, was 1.77 ms with the trainer at nice 19 alone,
// 1.03-1.19 ms in SCHED_IDLE (1.08 ms without a rebuild). Only where the thread may leave the class
// again to write (CAP_SYS_NICE or RLIMIT_NICE): otherwise it stays at its niceness alone.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { workerData } from 'node:worker_threads';
import { importEntry } from './load-entry.mjs';
import { enterIdleClass } from './thread-class.mjs';

if (workerData.niceness) {
  try {
    setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), workerData.niceness);
  } catch {
    // Not Linux: the thread keeps the process's priority.
  }
}
if (workerData.idle) enterIdleClass(workerData.niceness ?? 0);

await importEntry(workerData.entry);
