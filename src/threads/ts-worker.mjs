// Entry of the builder, trainer and ingest worker threads: imports the real entry named in
// workerData.entry (a file: URL of a .ts module) from dist/ or through tsx (threads/load-entry.mjs).
// workerData.niceness, when given, lowers this thread's CPU priority first; workerData.idle puts it
// in Linux's SCHED_IDLE class besides, where it may leave that class again to write
// (threads/thread-class.mjs).
import { workerData } from 'node:worker_threads';
import { importEntry } from './load-entry.mjs';
import { enterIdleClass, setThreadNiceness } from './thread-class.mjs';

if (workerData.niceness) setThreadNiceness(workerData.niceness);
if (workerData.idle) enterIdleClass(workerData.niceness ?? 0);

await importEntry(workerData.entry);
