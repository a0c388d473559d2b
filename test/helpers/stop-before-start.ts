// Starts the model builder (the real workers, through ModelBuilder) on a data directory, posts a
// recommendation request counter's counts at once and stops it at once: before its model thread
// has started, so before the report counters' thread exists. Prints the stored counter rows of
// the day (JSON). A process of its own, as test/helpers/build-model.ts says why. Usage:
//   node --import tsx test/helpers/stop-before-start.ts <dataDir>
import { pino } from 'pino';
import { DEFAULT_CONFIG } from '../../src/config/defaults.ts';
import { LATENCY_BUCKETS } from '../../src/domain/latency-buckets.ts';
import { ModelBuilder } from '../../src/main-thread/model-builder.ts';
import { readCounterRows } from '../../src/store/report-reader.ts';
import { Store } from '../../src/store/open.ts';

const [dataDir = ''] = process.argv.slice(2);
const options = { store: { ...DEFAULT_CONFIG.store, dataDir }, environments: { demo: DEFAULT_CONFIG.environments.demo! }, log: pino({ level: 'error' }) };
const hourStart = Math.floor(Date.now() / 3_600_000) * 3_600_000;
const day = new Date(hourStart).toISOString().slice(0, 10);
const builder = new ModelBuilder(options);
builder.postRequestCounts({
  type: 'requestCounts',
  hours: [{ environment: 'demo', startMs: hourStart, counts: [['list_name\u0000popular\u0000requests', 3]], latency: new Array<number>(LATENCY_BUCKETS).fill(0) }],
  items: [],
});
await builder.close();
const store = new Store(options.store);
console.log(JSON.stringify(readCounterRows(store, 'demo', 'day', day, day, 'list_name')));
await store.close();
