// Starts a ranking pool (main-thread/ranking-pool.ts, real workers) on a data directory, ranks `requests`
// requests through it, then asks each ranking worker how many timers its event loop holds
// (worker-timer-probe.mjs) and prints the counts as a JSON array (null: no answer). The Worker
// class Piscina constructs is wrapped to learn the workers' thread ids (observation only: the
// workers run as the service runs them). A process of its own, as stop-pool.ts. Usage:
//   node --import tsx --import ./test/helpers/worker-timer-probe.mjs test/helpers/rank-worker-timers.ts <dataDir> <requests>
import { createRequire } from 'node:module';
import { BroadcastChannel, type Worker as WorkerType } from 'node:worker_threads';

const workerThreads = createRequire(import.meta.url)('node:worker_threads') as typeof import('node:worker_threads');
const workers: WorkerType[] = [];
const OriginalWorker = workerThreads.Worker;
workerThreads.Worker = class extends OriginalWorker {
  constructor(...args: ConstructorParameters<typeof OriginalWorker>) {
    super(...args);
    workers.push(this);
  }
} as typeof OriginalWorker;

const { loadConfig } = await import('../../src/config/load.ts');
const { RankingPool } = await import('../../src/main-thread/ranking-pool.ts');
const { encodeRankTask } = await import('../../src/serving/messages.ts');
const { Store } = await import('../../src/store/open.ts');

const [dataDir = '', requestsArg = '1000'] = process.argv.slice(2);
const config = loadConfig({ AFFINITY_DATA_DIR: dataDir, AFFINITY_RANK_WORKERS: '1' });
const store = new Store(config.store);
const pool = new RankingPool(config, (err) => console.error(err));
await pool.ready();
for (let i = 0; i < Number(requestsArg); i++) {
  const task = encodeRankTask('demo', Math.floor(Date.now() / 1000), {
    userId: `u${i}`,
    deviceId: `d${i}`,
    history: [],
    exclude: [],
    lists: [{ name: 'popular', size: 10, limit: 10, content: [] }],
  });
  await pool.rank(task);
}

// Each worker's timer count, asked over a BroadcastChannel (worker-timer-probe.mjs); a worker
// whose event loop does not turn within PROBE_MS does not answer and is reported as null.
const PROBE_MS = 5000;
const channel = new BroadcastChannel('worker-timer-probe');
const answers = new Map<number, number>();
channel.onmessage = (event) => {
  const { threadId, timers } = (event as { data: { threadId: number; timers: number } }).data;
  answers.set(threadId, timers);
};
channel.postMessage('count');
const ranking = workers.filter((w) => w.threadId > 0).map((w) => w.threadId);
const deadline = Date.now() + PROBE_MS;
while (Date.now() < deadline && ranking.some((id) => !answers.has(id))) await new Promise((resolve) => setTimeout(resolve, 50));
channel.close();
console.log(JSON.stringify(ranking.map((id) => answers.get(id) ?? null)));
await pool.close();
await store.close();
