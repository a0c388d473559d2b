// What a trained-model build reads at scale (issue 12: "a build never reads the whole event log
// when a snapshot covers most of it"), on a data directory whose log the model builder has
// applied (events.bench.ts passes the builder replay's): the whole log read, then the same read
// keeping a snapshot, then 1% more events appended and read from the snapshot and that tail.
// In this process, as the trainer worker runs it (training/training-data.ts); training excluded.
import { DEFAULT_CONFIG } from '../src/config/defaults.ts';
import { readTrainingData } from '../src/training/training-data.ts';
import { writeTrainingSnapshot } from '../src/training/training-snapshot.ts';
import { EventLog } from '../src/store/event-log.ts';
import { Store } from '../src/store/open.ts';

export async function measureTrainingReads(dataDir: string): Promise<{ events: number; wholeSec: number; readFrom: number; tail: number; resumedSec: number }> {
  const store = new Store({ ...DEFAULT_CONFIG.store, dataDir });
  const environment = DEFAULT_CONFIG.environments.demo!;
  try {
    let started = performance.now();
    const whole = readTrainingData(store, 'demo', environment, false);
    const wholeSec = (performance.now() - started) / 1000;
    // Nothing to keep when a snapshot already covers the builder's position.
    const kept = readTrainingData(store, 'demo', environment, true).snapshot;
    if (kept) writeTrainingSnapshot(store, 'demo', kept.fingerprint, kept.position, kept.encoded);
    // A tail of 1% more page views, of items the log already holds (so they are indexed).
    const log = new EventLog(store);
    const tailBatches = Math.ceil(whole.eventsPosition / 1000);
    for (let b = 0; b < tailBatches; b++) {
      const events = Array.from({ length: 10 }, (_, k) => ({ event_type: 'detail_pageview', page_type: 'article_detail', channel: 'www', device_id: `d${b}`, user_id: `u${b}`, action_item: `i${(b * 10 + k) % 1000}`, action_item_type: 'article' }));
      await log.append('demo', events);
    }
    started = performance.now();
    const resumed = readTrainingData(store, 'demo', environment, true);
    const resumedSec = (performance.now() - started) / 1000;
    return { events: whole.eventsPosition, wholeSec, readFrom: resumed.readFrom, tail: resumed.eventsRead, resumedSec };
  } finally {
    await store.close();
  }
}
