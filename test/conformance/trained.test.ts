// The kernel's trainedTop (through its host, TrainedKernel) against its plain-TypeScript
// specification, referenceTrainedTop: hand-made cases state their results outright, generated
// ones must agree with the reference exactly (same ix, same f32 sums), call after call on the
// scratch earlier calls left, across arena growth.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { instantiateKernel } from '../../src/ranker/kernel.ts';
import { referenceTrainedTop, type TrainedTopInput } from '../../src/ranker/reference-trained.ts';
import { TrainedKernel } from '../../src/ranker/trained-kernel.ts';
import { mulberry32 } from '../../scripts/synthetic/random.ts';

const GENERATED_CASES = 60;
const CALLS_PER_CASE = 8;

interface Model {
  kernel: TrainedKernel;
  items: Uint32Array;
  columns: number[];
  weights: number[];
  /** Per row: first entry and count. */
  rows: Array<[start: number, count: number]>;
}

/** A kernel holding `rows` (each a list of [column, weight]) for a model over `items`. */
function modelOf(items: number[], rows: Array<Array<[number, number]>>): Model {
  const kernel = new TrainedKernel();
  const model: Model = { kernel, items: Uint32Array.from(items), columns: [], weights: [], rows: [] };
  kernel.reset(model.items);
  for (const row of rows) addRow(model, row);
  return model;
}

function addRow(model: Model, row: Array<[number, number]>): void {
  const start = model.kernel.append(row.map((e) => e[0]), Float32Array.from(row, (e) => e[1]), row.length);
  assert.equal(start, model.columns.length, 'rows are appended in order');
  for (const [c, w] of row) {
    model.columns.push(c);
    model.weights.push(Math.fround(w));
  }
  model.rows.push([start, row.length]);
}

interface Ask {
  /** [row, entries read, weight] */
  seeds: Array<[row: number, count: number, weight: number]>;
  exclude?: number[];
  catalogSize?: number;
  max: number;
}

function inputOf(model: Model, ask: Ask): TrainedTopInput {
  return {
    seedStart: Uint32Array.from(ask.seeds, ([r]) => model.rows[r]![0]),
    seedCount: Uint32Array.from(ask.seeds, ([r, n]) => Math.min(n, model.rows[r]![1])),
    seedWeight: Float32Array.from(ask.seeds, (s) => s[2]),
    arenaColumn: Uint32Array.from(model.columns),
    arenaWeight: Float32Array.from(model.weights),
    exclude: Uint32Array.from(ask.exclude ?? []),
    items: model.items,
    catalogSize: ask.catalogSize ?? 1 << 30,
    max: ask.max,
  };
}

/** The kernel's answer, copied (its views die at the next call). */
function kernelTop(model: Model, ask: Ask): { ix: number[]; score: number[] } {
  const input = inputOf(model, ask);
  const out = model.kernel.top(input.seedStart, input.seedCount, input.seedWeight, ask.seeds.length, input.exclude, input.exclude.length, input.catalogSize, input.max);
  return { ix: [...out.ix], score: [...out.score] };
}

function referenceTop(model: Model, ask: Ask): { ix: number[]; score: number[] } {
  const out = referenceTrainedTop(inputOf(model, ask));
  return { ix: [...out.ix], score: [...out.score] };
}

const both = (name: string, check: (top: (model: Model, ask: Ask) => { ix: number[]; score: number[] }) => void) => {
  test(`${name} (kernel)`, () => check(kernelTop));
  test(`${name} (reference)`, () => check(referenceTop));
};

describe('trainedTop', () => {
  // Items ix = 100 + column.
  const items = Array.from({ length: 8 }, (_, c) => 100 + c);

  both('sums weighted rows and returns the best positive sums, strongest first', (top) => {
    const model = modelOf(items, [
      [[1, 1], [2, 0.25], [3, -1]],
      [[2, 1], [3, 0.25], [4, 0.125]],
    ]);
    // column 1: 2; column 2: 2×0.25 + 1 = 1.5; column 3: −2 + 0.25 (dropped); column 4: 0.125.
    const out = top(model, { seeds: [[0, 3, 2], [1, 3, 1]], max: 10 });
    assert.deepEqual(out.ix, [101, 102, 104]);
    assert.deepEqual(out.score, [2, 1.5, 0.125]);
  });

  both('keeps only max, leaves out excluded columns and items past the catalog view', (top) => {
    const model = modelOf(items, [[[0, 5], [1, 4], [2, 3], [3, 2], [4, 1]]]);
    assert.deepEqual(top(model, { seeds: [[0, 5, 1]], max: 2 }).ix, [100, 101]);
    assert.deepEqual(top(model, { seeds: [[0, 5, 1]], max: 2, exclude: [0, 7] }).ix, [101, 102]);
    // ix 100 and 101 are below 102, the rest are not in the view yet.
    assert.deepEqual(top(model, { seeds: [[0, 5, 1]], max: 5, catalogSize: 102 }).ix, [100, 101]);
  });

  both('reads only the first `count` entries of a row (the strongest)', (top) => {
    const model = modelOf(items, [[[5, 3], [6, 2], [7, 1]]]);
    assert.deepEqual(top(model, { seeds: [[0, 2, 1]], max: 5 }).ix, [105, 106]);
  });

  both('no positive sum, no seed, or max 0: an empty answer', (top) => {
    const model = modelOf(items, [[[1, -1]], [[2, 1]]]);
    assert.deepEqual(top(model, { seeds: [[0, 1, 1]], max: 5 }).ix, []);
    assert.deepEqual(top(model, { seeds: [], max: 5 }).ix, []);
    assert.deepEqual(top(model, { seeds: [[1, 1, 1]], max: 0 }).ix, []);
  });

  test('agrees exactly with the reference on generated models, call after call, as the arena grows', () => {
    const random = mulberry32(1234);
    for (let c = 0; c < GENERATED_CASES; c++) {
      const columns = 1 + Math.floor(random() * (random() < 0.5 ? 50 : 5000));
      const items = Array.from({ length: columns }, (_, k) => (k * 7 + c) % (columns * 2));
      const model = modelOf(items, []);
      for (let call = 0; call < CALLS_PER_CASE; call++) {
        // Rows arrive as requests read them: the arena grows (and the scratch moves) between calls.
        const newRows = Math.floor(random() * 40);
        for (let r = 0; r < newRows; r++) {
          const length = Math.floor(random() * 300);
          // Few distinct weights: equal sums happen, and their order must match too.
          // A few entries name no model column (a malformed row): both leave them out.
          addRow(model, Array.from({ length }, () => [Math.floor(random() ** 2 * columns * (random() < 0.01 ? 3 : 1)), Math.round((random() * 2 - 0.6) * 8) / 8]));
        }
        if (model.rows.length === 0) continue;
        const seeds = Math.floor(random() * 30);
        const ask: Ask = {
          seeds: Array.from({ length: seeds }, () => [Math.floor(random() * model.rows.length), Math.floor(random() * 320), random() < 0.1 ? 0 : random() * 3]),
          exclude: Array.from({ length: Math.floor(random() * 20) }, () => Math.floor(random() * columns * 1.2)),
          catalogSize: random() < 0.2 ? Math.floor(random() * columns * 2) : 1 << 30,
          max: Math.floor(random() * 60),
        };
        const label = `case ${c} call ${call}`;
        const expected = referenceTop(model, ask);
        const actual = kernelTop(model, ask);
        assert.deepEqual(actual.ix, expected.ix, `${label}: ix`);
        assert.deepEqual(actual.score, expected.score, `${label}: sums`);
      }
    }
  });

  test('the kernel refuses a header whose seeds reach past the arena, touching nothing', () => {
    const kernel = instantiateKernel();
    const base = kernel.arenaOffset() >>> 0;
    const words = new Uint32Array(kernel.memory.buffer);
    const header = base + 1024;
    // One seed at base + 256 reading 10 entries of an arena of 4 at base + 512.
    words.set([0, 10, 0], (base + 256) >>> 2);
    words.set([1, base + 256, base + 512, 4, base + 4096, 6, base + 2048, 0, base + 2048, base + 2048, 0, 0, 5, base + 3072, base + 3200], header >>> 2);
    assert.equal(kernel.trainedTop(header), -1);
    words[((base + 256) >>> 2) + 1] = 4;
    assert.equal(kernel.trainedTop(header), 0, 'the same header with the seed inside the arena is run');
    // Epoch 0 would make every zeroed slot live: refused.
    words[(header >>> 2) + 5] = 0;
    assert.equal(kernel.trainedTop(header), -1);
    words[(header >>> 2) + 5] = 6;
    // Sums for more columns than memory holds: refused.
    words[(header >>> 2) + 10] = 0x1000_0000;
    assert.equal(kernel.trainedTop(header), -1);
  });
});
