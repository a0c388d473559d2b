// The request counter's records (main-thread/request-counter.ts counts on the main thread, the
// builder's builder/request-counts.ts writes, store/report-keys.ts): per-item counts and coverage
// are kept in chunks of ix, so a write rewrites only the chunks it touched; the reports read them
// back exactly, across chunks and flushes, in whatever order items were counted, together with
// whole-day records written before the chunks.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { CHUNKS_PER_FLUSH, RequestCountsWriter } from '../../../src/builder/request-counts.ts';
import { ITEMS_PER_POST, RequestCounter } from '../../../src/main-thread/request-counter.ts';
import type { RequestCounts } from '../../../src/domain/request-counts.ts';
import { Store } from '../../../src/store/open.ts';
import { COUNT_CHUNK_ITEMS, COVERAGE_CHUNK_ITEMS, dayOf } from '../../../src/store/report-keys.ts';
import { readCoverage, readTopItems } from '../../../src/store/report-reader.ts';
import { tempDir } from '../../helpers/server.ts';

const NOW = Date.UTC(2026, 10, 25, 12);
const DAY = dayOf(NOW);

async function withStore(run: (store: Store) => Promise<void>): Promise<void> {
  const dataDir = tempDir();
  const store = new Store({ dataDir, mapSizeBytes: 64 * 1024 ** 2 });
  try {
    await run(store);
  } finally {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * A counter posting to the builder's writer, as the service wires them (the thread hop aside):
 * flush runs the builder's next write, as its flush would (at most CHUNKS_PER_FLUSH item
 * chunks); close writes everything, as the builder's last flush before a stop does.
 */
function countingInto(store: Store) {
  const writer = new RequestCountsWriter(store);
  const counter = new RequestCounter((counts) => writer.add(counts));
  const write = (chunks?: number) => store.reportsRoot.transactionSync(writer.prepareFlush(chunks));
  return {
    counter,
    writer,
    flush(): void {
      counter.flush();
      write();
    },
    close(): void {
      counter.close();
      write(Infinity);
    },
  };
}

/** Names every ix the test counts, as the catalog does when it gives an item its index. */
async function nameItems(store: Store, ixs: number[]): Promise<void> {
  await store.root.transaction(() => {
    for (const ix of ixs) store.indexItems.put(['demo', ix], ['article', `a${ix}`]);
  });
}

function storedRecords(store: Store, kind: 'repn' | 'repc'): Array<{ key: unknown[]; bytes: number }> {
  const out = [];
  for (const { key, value } of store.reportState.getRange({ start: ['demo', kind], end: ['demo', `${kind}\uffff`] })) {
    out.push({ key: key as unknown[], bytes: (value as Uint8Array).length });
  }
  return out;
}

test('counts and coverage across chunks and flushes are read back exactly; a write touches only the chunks counted in', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  await withStore(async (store) => {
    const { counter, flush, close } = countingInto(store);
    const first = [3, 3, COUNT_CHUNK_ITEMS - 1, COUNT_CHUNK_ITEMS, COVERAGE_CHUNK_ITEMS + 5, 3 * COVERAGE_CHUNK_ITEMS];
    counter.recommended('demo', NOW, first);
    flush();
    // The second flush adds to chunks already stored and touches one more, counted out of ix order.
    counter.recommended('demo', NOW, [40_000, 3, COUNT_CHUNK_ITEMS]);
    flush();
    close();
    const distinct = [...new Set([...first, 40_000])];
    await nameItems(store, distinct);

    assert.deepEqual(readCoverage(store, 'demo', DAY, DAY).recommended, distinct.length);
    const top = readTopItems(store, 'demo', 'recommended', DAY, DAY, 10);
    assert.deepEqual(
      top.map((i) => [i.item_id, i.count]),
      [
        ['a3', 3],
        [`a${COUNT_CHUNK_ITEMS}`, 2],
        [`a${COUNT_CHUNK_ITEMS - 1}`, 1],
        [`a${COVERAGE_CHUNK_ITEMS + 5}`, 1],
        [`a${3 * COVERAGE_CHUNK_ITEMS}`, 1],
        ['a40000', 1],
      ],
    );
    const countChunks = new Set(distinct.map((ix) => Math.floor(ix / COUNT_CHUNK_ITEMS)));
    const counts = storedRecords(store, 'repn');
    assert.deepEqual(counts.map((r) => r.key[3]), [...countChunks].sort((a, b) => a - b));
    assert.ok(counts.every((r) => r.bytes === COUNT_CHUNK_ITEMS * 4), 'every counts record is one chunk');
    const coverageChunks = new Set(distinct.map((ix) => Math.floor(ix / COVERAGE_CHUNK_ITEMS)));
    const coverage = storedRecords(store, 'repc');
    assert.deepEqual(coverage.map((r) => r.key[3]), [...coverageChunks].sort((a, b) => a - b));
    assert.ok(coverage.every((r) => r.bytes === COVERAGE_CHUNK_ITEMS / 8), 'every coverage record is one chunk');
  });
});

test('whole-day records written before the chunks are still read, added to the chunks of the same day', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  await withStore(async (store) => {
    // The former layout: one u32 per ix and one bitset for the whole day.
    const legacyCounts = new Uint32Array(COUNT_CHUNK_ITEMS + 10);
    legacyCounts[3] = 5;
    legacyCounts[COUNT_CHUNK_ITEMS + 9] = 2;
    const legacyBits = new Uint8Array(Math.ceil((COUNT_CHUNK_ITEMS + 10) / 32) * 4);
    legacyBits[0] = 1 << 3;
    legacyBits[(COUNT_CHUNK_ITEMS + 9) >> 3] = 1 << ((COUNT_CHUNK_ITEMS + 9) & 7);
    await store.reportsRoot.transaction(() => {
      store.reportState.put(['demo', 'repn', DAY], Buffer.from(legacyCounts.buffer));
      store.reportState.put(['demo', 'repc', DAY], Buffer.from(legacyBits));
    });
    const { counter, close } = countingInto(store);
    counter.recommended('demo', NOW, [7, 3]);
    close();
    await nameItems(store, [3, 7, COUNT_CHUNK_ITEMS + 9]);

    assert.equal(readCoverage(store, 'demo', DAY, DAY).recommended, 3);
    assert.deepEqual(
      readTopItems(store, 'demo', 'recommended', DAY, DAY, 10).map((i) => [i.item_id, i.count]),
      [
        ['a3', 6],
        [`a${COUNT_CHUNK_ITEMS + 9}`, 2],
        ['a7', 1],
      ],
    );
  });
});

test('a flush holding many items leaves their counts for a later flush (close posts them), counted exactly', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  await withStore(async (store) => {
    const { counter, flush, close } = countingInto(store);
    const many = Array.from({ length: 5000 }, (_, i) => i * 3);
    counter.recommended('demo', NOW, many);
    flush();
    assert.deepEqual(storedRecords(store, 'repn'), [], 'over 4,096 items: held back');
    counter.recommended('demo', NOW, [0, 3]);
    close();
    await nameItems(store, many);
    assert.equal(readCoverage(store, 'demo', DAY, DAY).recommended, many.length);
    const top = readTopItems(store, 'demo', 'recommended', DAY, DAY, 3);
    assert.deepEqual(top.map((i) => [i.item_id, i.count]), [['a0', 2], ['a3', 2], ['a6', 1]]);
  });
});

test("today's counts stay exact over flushes that reuse its array, and a past day's are written once", async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  await withStore(async (store) => {
    const { counter, flush, close } = countingInto(store);
    const now = Date.now();
    const yesterday = now - 86_400_000;
    counter.recommended('demo', yesterday, [5, 5, 7]);
    counter.recommended('demo', now, [5, 9]);
    flush();
    // Today's array is kept and counts again from 0; yesterday's was written whole and dropped.
    counter.recommended('demo', now, [5, 9, 9, 11]);
    flush();
    flush();
    close();
    await nameItems(store, [5, 7, 9, 11]);
    const top = (day: string) => readTopItems(store, 'demo', 'recommended', day, day, 10).map((i) => [i.item_id, i.count]);
    assert.deepEqual(top(dayOf(now)), [
      ['a9', 3],
      ['a5', 2],
      ['a11', 1],
    ]);
    assert.deepEqual(top(dayOf(yesterday)), [
      ['a5', 2],
      ['a7', 1],
    ]);
    assert.equal(readCoverage(store, 'demo', dayOf(now), dayOf(now)).recommended, 3);
  });
});

test('per-item counts over thousands of chunks, counted in any order, are written at most CHUNKS_PER_FLUSH chunks a write, coverage first, and add up exactly', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  await withStore(async (store) => {
    const { counter, writer, flush, close } = countingInto(store);
    // 4,000 items (due at once: at most 4,096) in 4,000 different count chunks, counted from the last.
    const many = Array.from({ length: 4000 }, (_, i) => (3999 - i) * COUNT_CHUNK_ITEMS);
    const coverageChunks = new Set(many.map((ix) => Math.floor(ix / COVERAGE_CHUNK_ITEMS))).size;
    counter.recommended('demo', NOW, [...many, many[3999]!]);
    flush();
    assert.equal(storedRecords(store, 'repc').length, Math.min(coverageChunks, CHUNKS_PER_FLUSH), 'the coverage chunks go first');
    assert.equal(storedRecords(store, 'repn').length, Math.max(0, CHUNKS_PER_FLUSH - coverageChunks), 'then count chunks, up to the bound');
    let writes = 1;
    for (; writer.pending; writes++) {
      const before = storedRecords(store, 'repn').length + storedRecords(store, 'repc').length;
      flush();
      assert.ok(storedRecords(store, 'repn').length + storedRecords(store, 'repc').length - before <= CHUNKS_PER_FLUSH);
    }
    assert.equal(writes, Math.ceil((many.length + coverageChunks) / CHUNKS_PER_FLUSH));
    assert.equal(storedRecords(store, 'repn').length, many.length, 'every chunk written, each once');
    counter.recommended('demo', NOW, [COUNT_CHUNK_ITEMS * 4000, many[3998]!]);
    close();
    assert.equal(storedRecords(store, 'repn').length, many.length + 1);
    await nameItems(store, [...many, COUNT_CHUNK_ITEMS * 4000]);
    assert.equal(readCoverage(store, 'demo', DAY, DAY).recommended, many.length + 1);
    const top = readTopItems(store, 'demo', 'recommended', DAY, DAY, 3);
    assert.deepEqual(top.map((i) => [i.item_id, i.count]), [['a0', 2], [`a${COUNT_CHUNK_ITEMS}`, 2], [`a${2 * COUNT_CHUNK_ITEMS}`, 1]]);
  });
});

test("a writer started on stored counts (the builder restarted) adds to them: each chunk's stored value is read before its first count", async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  await withStore(async (store) => {
    const first = countingInto(store);
    first.counter.recommended('demo', NOW, [3, 3, COVERAGE_CHUNK_ITEMS + 1]);
    first.close();
    const second = countingInto(store);
    second.counter.recommended('demo', NOW, [3, 4]);
    second.flush();
    second.counter.recommended('demo', NOW, [4]);
    second.close();
    await nameItems(store, [3, 4, COVERAGE_CHUNK_ITEMS + 1]);
    assert.deepEqual(
      readTopItems(store, 'demo', 'recommended', DAY, DAY, 10).map((i) => [i.item_id, i.count]),
      [
        ['a3', 3],
        ['a4', 2],
        [`a${COVERAGE_CHUNK_ITEMS + 1}`, 1],
      ],
    );
    assert.equal(readCoverage(store, 'demo', DAY, DAY).recommended, 3, "the first writer's coverage bits kept");
  });
});

test('a due flush of many items posts at most ITEMS_PER_POST a post, the rest on the next turns; counts made meanwhile add up', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval', 'Date'], now: NOW });
  const posts: RequestCounts[] = [];
  const counter = new RequestCounter((counts) => posts.push(counts));
  const many = ITEMS_PER_POST * 2 + 1000;
  counter.recommended('demo', NOW, Array.from({ length: many }, (_, ix) => ix));
  t.mock.timers.tick(10_000); // the interval's flushes: the last one is due for per-item counts
  assert.ok(posts.length > 0);
  const sizes = () => posts.map((p) => p.items.reduce((n, i) => n + i.ix.length, 0));
  assert.equal(sizes().at(-1), ITEMS_PER_POST, 'the due flush posts one part');
  // Counted between the parts: ix 0 again, and a new one.
  counter.recommended('demo', NOW + 10_000, [0, many]);
  for (let turn = 0; turn < 4; turn++) await new Promise((r) => setImmediate(r));
  const beforeClose = sizes().filter((n) => n > 0);
  assert.deepEqual(beforeClose.slice(-3), [ITEMS_PER_POST, ITEMS_PER_POST, 1000], 'the rest came on the next turns, in parts');
  counter.close();
  assert.ok(sizes().every((n) => n <= ITEMS_PER_POST), `post sizes ${sizes().join(', ')}`);
  const total = new Map<number, number>();
  for (const p of posts) for (const i of p.items) i.ix.forEach((ix, k) => total.set(ix, (total.get(ix) ?? 0) + i.counts[k]!));
  assert.equal(total.size, many + 1);
  assert.equal(total.get(0), 2);
  assert.equal(total.get(many), 1);
  assert.equal([...total.values()].reduce((a, b) => a + b, 0), many + 2);
});
