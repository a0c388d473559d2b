// Runs the model builder (the real worker, through ModelBuilder) over a data directory's event
// log, stopping and starting it again after each of the given pauses, then to the log's end (the
// model's and the report counters' positions both), and
// prints the event position each stop left written (a JSON array) on stdout. A pause of 0 stops it
// as soon as it started: the worker reads its first chunk before it first yields, so it stops
// after at least one chunk (ModelBuilder's chunkSize, 5,000 events), at a chunk boundary.
// A process of its own: test processes preload test/helpers/openapi-conformance.ts, and worker
// threads inherit that preload but cannot load TypeScript, so a builder started inside a test
// process fails at start (and is restarted forever). Usage:
//   node --import tsx test/helpers/build-model.ts <dataDir> <events> [pauseMs,...]
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { DEFAULT_CONFIG } from '../../src/config/defaults.ts';
import { ModelBuilder } from '../../src/main-thread/model-builder.ts';
import { eventsPositionKey } from '../../src/store/model-layout.ts';
import { Store } from '../../src/store/open.ts';

const [dataDir = '', eventsArg = '0', pausesArg = ''] = process.argv.slice(2);
const events = Number(eventsArg);
const pauses = pausesArg === '' ? [] : pausesArg.split(',').map(Number);
const options = { store: { ...DEFAULT_CONFIG.store, dataDir }, environments: { demo: DEFAULT_CONFIG.environments.demo! }, log: pino({ level: 'error' }) };

/** The position the last flush wrote (read once the builder has closed its store). */
async function writtenPosition(): Promise<number> {
  const store = new Store(options.store);
  const position = (store.modelState.get(eventsPositionKey('demo')) as number | undefined) ?? 0;
  await store.close();
  return position;
}

const stops: number[] = [];
for (const ms of pauses) {
  const builder = new ModelBuilder(options);
  if (ms > 0) await sleep(ms);
  await builder.close();
  stops.push(await writtenPosition());
}
const builder = new ModelBuilder(options);
// A deadline: a builder that never gets there fails the run instead of hanging it.
const deadline = Date.now() + 120_000;
// Both of its consumers of the log: the model's thread and the report counters'.
const written = () => Math.min(builder.stats?.positions.demo ?? 0, builder.reportsStats?.positions.demo ?? 0);
while (written() < events && Date.now() < deadline) await sleep(20);
const reached = written();
await builder.close();
if (reached < events) {
  console.error(`builder reached ${reached} of ${events} events in 120 s`);
  process.exit(1);
}
console.log(JSON.stringify(stops));
