// The builder's flush as builder/builder-worker.ts runs it on one environment's state
// (builder/environment-model.ts): the consumer records, links and popularity encoded at its start,
// the neighbour rows written afterwards a bounded number per transaction, each stamped with the
// event position it counts up to, and the environment's position stored with the rest once every
// row is. A builder killed between those transactions restarts from the last position stored,
// with rows in LMDB that already count some of the events it replays: each row must skip those,
// and the state written in the end must be what a builder that never stopped writes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_CONFIG } from '../../../src/config/defaults.ts';
import type { TrackedEvent } from '../../../src/domain/event.ts';
import { EnvironmentModel } from '../../../src/builder/environment-model.ts';
import type { Store } from '../../../src/store/open.ts';
import { storedModel, withModelStore } from '../../helpers/model-store.ts';
import { mulberry32 } from '../../../scripts/synthetic/random.ts';

const EVENTS = 3000;
const ITEMS = 40;
const TYPES = ['detail_pageview', 'detail_pageview', 'purchase', 'add_to_cart'] as const;
const T0 = Date.UTC(2026, 10, 28, 9);

/** Events of 60 users on 40 items, some from devices their users later sign in on (links merge histories). */
function eventsOf(seed: number): Array<{ e: TrackedEvent; ix: number }> {
  const random = mulberry32(seed);
  const out: Array<{ e: TrackedEvent; ix: number }> = [];
  for (let i = 0; i < EVENTS; i++) {
    const user = Math.floor(random() * 60);
    const signedIn = random() < 0.7;
    const ix = Math.floor(random() ** 2 * ITEMS);
    const e = { event_type: TYPES[Math.floor(random() * TYPES.length)]!, action_item: `i${ix}`, device_id: `d${user}`, ...(signedIn ? { user_id: `u${user}` } : {}) };
    out.push({ e: e as unknown as TrackedEvent, ix });
  }
  return out;
}

const config = DEFAULT_CONFIG.environments.demo!;

/** What the builder worker does around one environment's state; the position it stored, as it would in model-state. */
class Flusher {
  stored = 0;
  #open: { write: () => void; position: number } | undefined;
  constructor(
    readonly store: Store,
    readonly model: EnvironmentModel,
  ) {}

  start(position: number): void {
    this.#open = { write: this.model.prepareFlush(), position };
    this.model.rows.startRows();
  }

  /** Writes up to `most` rows started, stamped with `position` (the last event applied). */
  rows(most: number, position: number): void {
    const put = this.model.rows.prepareRows(most, position);
    this.store.modelRoot.transactionSync(() => {
      put();
    });
  }

  finish(): void {
    const { write, position } = this.#open!;
    this.store.modelRoot.transactionSync(() => {
      write();
    });
    this.stored = position;
    this.#open = undefined;
    this.model.rows.takeWritten([]);
    this.model.flushReadable();
  }

  /** A whole flush at `position`: its rows in transactions of `most`. */
  all(position: number, most = 7): void {
    this.start(position);
    while (this.model.rows.pendingRows > 0) this.rows(most, position);
    this.finish();
  }
}

function applyRange(model: EnvironmentModel, events: Array<{ e: TrackedEvent; ix: number }>, from: number, to: number, flusher?: Flusher, every = 200): void {
  for (let p = from; p <= to; p++) {
    const { e, ix } = events[p - 1]!;
    model.apply(T0 + p * 1000, e, ix, p);
    if (flusher && p % every === 0) flusher.all(p);
  }
}

test('a builder killed while it writes its rows restarts from the stored position and stores what one that never stopped stores', async () => {
  const events = eventsOf(5);
  const straight = await withModelStore((store) => {
    const model = new EnvironmentModel(store, 'demo', config, true);
    applyRange(model, events, 1, EVENTS, new Flusher(store, model));
    new Flusher(store, model).all(EVENTS);
    return storedModel(store);
  });
  for (const killedAt of [1650, 2010]) {
    const restarted = await withModelStore((store) => {
      const model = new EnvironmentModel(store, 'demo', config, true);
      const flusher = new Flusher(store, model);
      applyRange(model, events, 1, 1500, flusher);
      // A flush started at 1500: some rows written at once, others after more events, then killed.
      flusher.start(1500);
      flusher.rows(10, 1500);
      applyRange(model, events, 1501, 1600);
      flusher.rows(10, 1600);
      applyRange(model, events, 1601, killedAt);
      if (killedAt > 2000) flusher.rows(1000, killedAt);
      assert.equal(flusher.stored, 1400, 'the last flush finished before the kill');
      // The restart: state read back from LMDB, the log replayed from the stored position.
      const again = new EnvironmentModel(store, 'demo', config, false);
      const afterRestart = new Flusher(store, again);
      applyRange(again, events, flusher.stored + 1, EVENTS, afterRestart);
      afterRestart.all(EVENTS);
      return storedModel(store);
    });
    assert.ok([...straight.keys()].some((k) => k.includes('"nb"')), 'rows were written');
    assert.deepEqual([...restarted.keys()].sort(), [...straight.keys()].sort(), `killed at ${killedAt}: the same keys`);
    for (const [key, value] of straight) assert.deepEqual(restarted.get(key), value, `killed at ${killedAt}: ${key}`);
  }
});

test('rows stamped with a later position than the one stored count each replayed event once', async () => {
  const events = eventsOf(9);
  await withModelStore((store) => {
    const model = new EnvironmentModel(store, 'demo', config, true);
    const flusher = new Flusher(store, model);
    applyRange(model, events, 1, 400, flusher);
    // Every row written at 450 (none left pending), then killed before the finish.
    applyRange(model, events, 401, 450);
    flusher.start(450);
    while (model.rows.pendingRows > 0) flusher.rows(1000, 450);
    const atKill = storedModel(store);
    const again = new EnvironmentModel(store, 'demo', config, false);
    // Replaying 401..450 changes no row: each counts those events already.
    applyRange(again, events, 401, 450);
    const afterReplay = new Flusher(store, again);
    afterReplay.start(450);
    const changed = again.rows.pendingRows;
    while (again.rows.pendingRows > 0) afterReplay.rows(1000, 450);
    afterReplay.finish();
    const afterFlush = storedModel(store);
    for (const [key, value] of atKill) if (key.includes('"nb"')) assert.deepEqual(afterFlush.get(key), value, key);
    assert.equal(changed, 0, 'no row changed by events it already counts');
  });
});
