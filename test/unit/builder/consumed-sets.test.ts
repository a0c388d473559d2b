// builder/consumed-sets.ts on real LMDB (in consumer records, builder/consumer-records.ts): dropping
// the cache after every flush (trim(0)), so every later touch reads the set back, stores the same
// as keeping every set in memory.
import { mulberry32 } from '../../../scripts/synthetic/random.ts';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConsumedSets } from '../../../src/builder/consumed-sets.ts';
import { ConsumerRecords } from '../../../src/builder/consumer-records.ts';
import { flushedTogether, hasRecord, storedWithFlushes } from '../../helpers/model-store.ts';
import type { Store } from '../../../src/store/open.ts';

/** Consumption by users and by devices: devices 0-19 merged into users from the 500th event on, 35-39 never. */
function run(trim: boolean): Promise<Map<string, unknown>> {
  const random = mulberry32(9);
  const make = (store: Store) => {
    const records = new ConsumerRecords(store, 'demo', true);
    return flushedTogether({ sets: new ConsumedSets(records) }, [records]);
  };
  return storedWithFlushes(make, 1500, ({ sets }, i) => {
    const u = Math.floor(random() * 40);
    const ix = Math.floor(random() * 80);
    if ((u < 20 && i <= 500) || u >= 35) return sets.add(undefined, `d${u}`, ix);
    if (u < 20) sets.merge(`d${u}`, `u${u}`);
    sets.add(`u${u}`, undefined, ix);
  }, trim);
}

test('trim(0) after every flush (sets read back from LMDB) stores the same as no trim', async () => {
  const kept = await run(false);
  assert.ok(hasRecord(kept, '"u"') && hasRecord(kept, '"d"'), 'user and device records were written');
  assert.deepEqual(await run(true), kept);
});
