// builder/top-items.ts and the lists builder/popularity.ts keeps with it, on real LMDB: lists kept up
// to date from changed items alone equal a selection from every score, and the trending list a
// builder writes does not depend on whether it was restarted (summed anew at start).
import { mulberry32 } from '../../../scripts/synthetic/random.ts';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PopularityState, SECONDS_PER_BUCKET } from '../../../src/builder/popularity.ts';
import { TopItems } from '../../../src/builder/top-items.ts';
import { decodeTopItems } from '../../../src/store/model-layout.ts';
import { topItemsKey } from '../../../src/store/model-layout.ts';
import type { Store } from '../../../src/store/open.ts';
import { withModelStore } from '../../helpers/model-store.ts';


/** The `size` best of `scores` by the order the lists promise: score descending, index ascending. */
function best(scores: Float32Array, size: number): number[] {
  const ix = [...scores.keys()].filter((i) => scores[i]! > 0);
  return ix.sort((a, b) => scores[b]! - scores[a]! || a - b).slice(0, size);
}

test('a list updated from the changed items equals the best of all scores after every step, ties by index', () => {
  const random = mulberry32(7);
  const scores = new Float32Array(400);
  const kept = new TopItems(25);
  kept.select(scores);
  for (let step = 0; step < 300; step++) {
    // Integer steps make ties common; a few large jumps move items across the cut.
    for (let k = 0; k < 1 + Math.floor(random() * 12); k++) {
      const ix = Math.floor(random() ** 2 * scores.length);
      scores[ix] = scores[ix]! + (random() < 0.05 ? 20 : 1 + Math.floor(random() * 3));
      kept.changed(ix);
    }
    kept.update(scores);
    assert.deepEqual([...decodeTopItems(kept.encode(scores)).ix], best(scores, 25), `step ${step}`);
  }
  const fresh = new TopItems(25);
  fresh.select(scores);
  assert.deepEqual(fresh.encode(scores), kept.encode(scores), 'a full selection writes the same bytes');
});

test('a list that only its members changed is re-ranked, with their new scores', () => {
  const scores = new Float32Array([0, 5, 3, 1]);
  const kept = new TopItems(2);
  kept.select(scores);
  assert.deepEqual(decodeTopItems(kept.encode(scores)), { ix: new Uint32Array([1, 2]), weight: new Float32Array([5, 3]) });
  scores[2] = 9;
  kept.changed(2);
  assert.equal(kept.pending, true);
  assert.equal(kept.update(scores), true);
  assert.deepEqual(decodeTopItems(kept.encode(scores)), { ix: new Uint32Array([2, 1]), weight: new Float32Array([9, 5]) });
  assert.equal(kept.update(scores), false, 'nothing changed since');
});

test('a stored list cut or padded reads as empty, not as other items', () => {
  const scores = new Float32Array([1, 2]);
  const kept = new TopItems(5);
  kept.select(scores);
  const bytes = kept.encode(scores);
  assert.equal(decodeTopItems(bytes).ix.length, 2);
  assert.equal(decodeTopItems(bytes.subarray(0, bytes.length - 1)).ix.length, 0);
  assert.equal(decodeTopItems(Buffer.concat([bytes, Buffer.alloc(4)])).ix.length, 0);
  assert.equal(decodeTopItems(undefined).ix.length, 0);
});

for (const hours of [1, 30, 'earlier hours, then this one'] as const) {
  test(`trending and popular as written are the same whether the state was restarted between flushes or not (events over ${hours}${typeof hours === 'number' ? ' hours' : ''})`, async () => {
    const now = Date.now();
    const hour = Math.floor(now / 1000 / SECONDS_PER_BUCKET);
    const random = mulberry32(11);
    // Weighted consumption, fractional weights; over 30 hours some fall outside trending's 24.
    // The third way sums this hour's events onto a base of the earlier hours that holds still.
    const ago = (i: number) => (typeof hours === 'number' ? Math.floor(random() * hours) : i < 1500 ? 1 + Math.floor(random() * 29) : 0);
    const events = Array.from({ length: 3000 }, (_, i) => ({
      ix: Math.floor(random() ** 2 * 2000),
      sec: Math.min(Math.floor(now / 1000), (hour - ago(i)) * SECONDS_PER_BUCKET + Math.floor(random() * SECONDS_PER_BUCKET)),
      w: [1, 0.5, 3, 1.7][Math.floor(random() * 4)]!,
    }));
    const lists = (store: Store) => ['popular', 'trending'].map((list) => store.model.get(topItemsKey('demo', list as 'popular')) as Buffer);
    const run = async (restartEvery: number) =>
      withModelStore(async (store) => {
        let state = new PopularityState(store, 'demo');
        for (let i = 0; i < events.length; i++) {
          state.add(events[i]!.ix, events[i]!.sec, events[i]!.w);
          if ((i + 1) % 250 === 0) {
            const write = state.prepareFlush(now);
            await store.model.transaction(write);
            if (restartEvery > 0 && (i + 1) % restartEvery === 0) state = new PopularityState(store, 'demo');
          }
        }
        return lists(store);
      });
    const straight = await run(0);
    const restarted = await run(500);
    assert.ok(decodeTopItems(straight[1]).ix.length > 100, 'trending has items');
    assert.deepEqual(restarted, straight);
  });
}
