// Entry of every worker thread: Node 20 does not run a worker's TypeScript entry through the
// tsx loader given in execArgv, so the worker starts here in plain JS, registers tsx, then
// imports the real entry named in workerData.entry (a file: URL).
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
