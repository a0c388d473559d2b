// The event log (store/event-log.ts) on a real LMDB: batches packed with the database's shared
// structures read back exactly as appended (nulls, numbers, nested baskets, key order), and a
// store whose log was written before (the `events` database: acceptance time, then the body's
// JSON) reads on: its batches first, then the ones appended since, whichever way it is read.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, test } from 'node:test';
import type { TrackedEvent } from '../../../src/domain/event.ts';
import { EventLog } from '../../../src/store/event-log.ts';
import { Store } from '../../../src/store/open.ts';
import { DEFAULT_CONFIG } from '../../../src/config/defaults.ts';
import { tempDir } from '../../helpers/server.ts';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function openStore(): Store {
  const dataDir = tempDir('affinity-event-log-');
  dirs.push(dataDir);
  return new Store({ ...DEFAULT_CONFIG.store, dataDir });
}

const view = (n: number, user: string | null = `u${n}`) =>
  ({ event_type: 'detail_pageview', page_type: 'article_detail', device_id: `d${n}`, user_id: user, action_item: `i${n}`, action_item_type: 'article', channel: 'www' }) as TrackedEvent;

/** A batch as the log wrote it before event-batches: 8 bytes of acceptance time (f64 LE), then `{"events": [...]}`. */
function legacyBatch(t: number, events: TrackedEvent[]): Buffer {
  const json = Buffer.from(JSON.stringify({ events }));
  const out = Buffer.alloc(8 + json.length);
  out.writeDoubleLE(t, 0);
  json.copy(out, 8);
  return out;
}

test('appended batches read back exactly, in order, with their acceptance times', async () => {
  const store = openStore();
  try {
    const log = new EventLog(store);
    const purchase = { event_type: 'purchase', device_id: 'd9', user_id: null, action_item: 'p1', action_item_type: 'product', amount: 2, purchased_price: 19.99, original_price: 25, channel: 'www' } as TrackedEvent;
    const cart = { event_type: 'add_to_cart', page_type: 'product_detail', device_id: 'd9', user_id: 'ü-ser ✓', action_item: 'p1', action_item_type: 'product', amount: 1, channel: 'www', basket_content: [{ id: 'p1', type: 'product', amount: 1 }] } as unknown as TrackedEvent;
    assert.deepEqual(await log.append('demo', [view(1), view(2, null)], 1000), { stored: 2, duplicates: 0 });
    assert.deepEqual(await log.append('demo', [cart, purchase], 2000), { stored: 2, duplicates: 0 });
    assert.deepEqual(await log.append('other', [view(3)], 3000), { stored: 1, duplicates: 0 });
    const read = [...log.after('demo', 0)];
    assert.deepEqual(read.map((r) => r.seq), [1, 2, 3, 4]);
    assert.deepEqual(read.map((r) => r.event), [{ t: 1000, e: view(1) }, { t: 1000, e: view(2, null) }, { t: 2000, e: cart }, { t: 2000, e: purchase }]);
    // Field order as sent (GET /events shows the events as they came).
    assert.deepEqual(Object.keys(read[2]!.event.e), Object.keys(cart));
    assert.deepEqual([...log.after('demo', 2)].map((r) => r.seq), [3, 4], 'from inside the log');
    assert.equal(log.endOf('demo'), 4);
    assert.equal(log.endOf('other'), 5);
    assert.equal(log.lastSeq(), 5);
    assert.deepEqual(log.recent('demo', 3).map((s) => s.e), [purchase, cart, view(2, null)]);
  } finally {
    await store.close();
  }
});

test('duplicates by event_id are left out of what is packed', async () => {
  const store = openStore();
  try {
    const log = new EventLog(store);
    const a = { ...view(1), event_id: 'a' } as TrackedEvent;
    const b = { ...view(2), event_id: 'b' } as TrackedEvent;
    await log.append('demo', [a], 1000);
    assert.deepEqual(await log.append('demo', [a, b, b], 2000), { stored: 1, duplicates: 2 });
    assert.deepEqual([...log.after('demo', 0)].map((r) => r.event), [{ t: 1000, e: a }, { t: 2000, e: b }]);
  } finally {
    await store.close();
  }
});

test('a log written before event-batches reads first, then what is appended after it, every way it is read', async () => {
  const store = openStore();
  try {
    // Two batches (seq 1–2 and 3–5) as an earlier version wrote them, and its counter.
    await store.root.transaction(() => {
      store.events.put(['demo', 1], legacyBatch(1000, [view(1), view(2)]));
      store.events.put(['demo', 3], legacyBatch(2000, [view(3), view(4, null), view(5)]));
      store.meta.put('eventSeq', 5);
    });
    const log = new EventLog(store);
    assert.equal(log.endOf('demo'), 5, 'the end of a log written before');
    assert.deepEqual([...log.after('demo', 3)].map((r) => [r.seq, r.event.e.action_item]), [[4, 'i4'], [5, 'i5']], 'from inside a batch written before');
    assert.deepEqual(await log.append('demo', [view(6), view(7)], 3000), { stored: 2, duplicates: 0 });
    assert.equal(log.endOf('demo'), 7);
    const all = [...log.after('demo', 0)];
    assert.deepEqual(all.map((r) => r.seq), [1, 2, 3, 4, 5, 6, 7]);
    assert.deepEqual(all.map((r) => r.event.t), [1000, 1000, 2000, 2000, 2000, 3000, 3000]);
    assert.deepEqual(all[3]!.event.e, view(4, null));
    assert.deepEqual([...log.after('demo', 5)].map((r) => r.seq), [6, 7], 'after the last batch written before');
    assert.deepEqual([...log.after('demo', 6)].map((r) => r.seq), [7], 'from inside a packed batch');
    assert.deepEqual([...log.batchesAfter('demo', 3)].map((b) => b.first), [3, 6]);
    assert.deepEqual([...log.batchesAfter('demo', 5)].map((b) => b.first), [3, 6], 'the batch written before that holds the position, then the packed ones');
    assert.deepEqual(log.recent('demo', 4).map((s) => s.e.action_item), ['i7', 'i6', 'i5', 'i4'], 'newest first across both');
    assert.deepEqual(log.recent('demo', 50).length, 7);
  } finally {
    await store.close();
  }
});
