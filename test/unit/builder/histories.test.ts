// builder/histories.ts on real LMDB (in consumer records, builder/consumer-records.ts): dropping the
// caches after every flush (trim(0)), so every later touch reads records and links back, stores
// the same as keeping them all in memory.
import { mulberry32 } from '../../../scripts/synthetic/random.ts';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Store } from '../../../src/store/open.ts';
import { ConsumerRecords } from '../../../src/builder/consumer-records.ts';
import { HistoryState } from '../../../src/builder/histories.ts';
import { flushedTogether, hasRecord, storedWithFlushes } from '../../helpers/model-store.ts';

/** Events as builder/environment-model.ts applies them to histories. */
function run(trim: boolean): Promise<Map<string, unknown>> {
  const random = mulberry32(3);
  const make = (store: Store) => {
    const records = new ConsumerRecords(store, 'demo', true);
    const histories = new HistoryState(store, 'demo', 6, records, true);
    return flushedTogether({ histories }, [records, histories]);
  };
  return storedWithFlushes(make, 1500, ({ histories }, i) => {
    const u = Math.floor(random() * 40);
    const deviceId = `d${u}`;
    // Devices 0-19 log in from event 600 on (their histories merge into the user's) and are
    // sometimes logged out after (their events go to the linked user's history); 35-39 never log in.
    const loggedOut = u >= 35 || (u < 20 && (i <= 600 || random() < 0.3));
    const userId = loggedOut ? undefined : `u${u % 30}`;
    if (userId && histories.linkedUser(deviceId) !== userId) histories.link(deviceId, userId);
    histories.append(histories.historyFor(userId, deviceId)!, Math.floor(random() * 50), 1, 1000 + i);
  }, trim);
}

test('trim(0) after every flush (histories and links read back from LMDB) stores the same as no trim', async () => {
  const kept = await run(false);
  assert.ok(hasRecord(kept, '"link"') && hasRecord(kept, '"d"'), 'devices were linked and device records written');
  assert.deepEqual(await run(true), kept);
});
