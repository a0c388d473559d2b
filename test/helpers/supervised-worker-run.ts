// Runs threads/supervised-worker.ts on a real worker thread (test/helpers/echo-worker.ts) and
// prints what happened as JSON: messages, exits, log lines, whether it ran. A process of its own:
// worker threads started inside a test process inherit its TypeScript preload and fail at start
// (test/helpers/build-model.ts). Usage: node --import tsx test/helpers/supervised-worker-run.ts
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { SupervisedWorker } from '../../src/threads/supervised-worker.ts';

const logs: Array<{ level: number; msg: string; code?: number }> = [];
const log = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line) as (typeof logs)[number]) });
const messages: string[] = [];
const exits: number[] = [];
/** An echo worker under supervision, its messages and exits recorded. */
const supervised = (name: string) =>
  new SupervisedWorker<string, string>({
    name,
    workerData: { entry: new URL('./echo-worker.ts', import.meta.url).href },
    log,
    stopMessage: 'stop',
    terminatedNote: '(what it had is lost)',
    onMessage: (message) => messages.push(message),
    onExit: (code) => exits.push(code),
  });
const worker = supervised('echo worker');
const until = async (what: () => boolean) => {
  for (const deadline = Date.now() + 20_000; !what() && Date.now() < deadline; ) await sleep(10);
};
const count = (m: string) => messages.filter((x) => x === m).length;

await until(() => count('started') === 1);
worker.postMessage('ping');
await until(() => count('pong') === 1);
worker.postMessage('crash');
await until(() => exits.length === 1);
const runningAfterCrash = worker.running;
// Started again after the restart delay, and answering.
await until(() => count('started') === 2);
worker.postMessage('ping');
await until(() => count('pong') === 2);
const runningAfterRestart = worker.running;
const stoppingBeforeClose = worker.stopping;
await worker.close(10_000);
const afterStop = { running: worker.running, exits: [...exits], bye: count('bye') };
// A thread that ignores its stop is terminated after the bound.
const stuck = supervised('stuck worker');
await until(() => count('started') === 3);
stuck.postMessage('hang');
const stopStartedAt = Date.now();
await stuck.close(300);
const stuckStop = { ms: Date.now() - stopStartedAt, running: stuck.running };
console.log(JSON.stringify({ runningAfterCrash, runningAfterRestart, stopping: [stoppingBeforeClose, worker.stopping], afterStop, stuckStop, messages, logs: logs.map((l) => ({ level: l.level, msg: l.msg, code: l.code })) }));
