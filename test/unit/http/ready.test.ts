// /ready's decision (http/routes/ready.ts notReadyReasons) from the states it reads: the
// integration tests see the ready answer of a healthy server; the not-ready answers need states
// a running server passes through too briefly to catch without timing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { notReadyReasons, type ReadinessSources } from '../../../src/http/routes/ready.ts';

function state(overrides: Partial<ReadinessSources> = {}): ReadinessSources {
  return {
    environments: ['demo', 'shop'],
    probeStore: () => undefined,
    builder: { running: true, stats: { positions: { demo: 3, shop: 0 } } },
    ingest: { running: true },
    pool: { threads: 2, engineBuilt: true },
    rankWorkers: 2,
    ...overrides,
  };
}

test('ready when the store reads, every worker runs, the ranking engines are built and the builder has loaded every environment', () => {
  assert.deepEqual(notReadyReasons(state()), []);
});

test('each missing condition is named', () => {
  assert.deepEqual(notReadyReasons(state({ probeStore: () => { throw new Error('The environment is already closed'); } })), ['storage is not open: The environment is already closed']);
  assert.deepEqual(notReadyReasons(state({ builder: { running: false, stats: { positions: { demo: 0, shop: 0 } } } })), ['the model builder worker is not running']);
  assert.deepEqual(notReadyReasons(state({ ingest: { running: false } })), ['the ingest worker is not running']);
  assert.deepEqual(notReadyReasons(state({ pool: { threads: 1, engineBuilt: false } })), ['1 of 2 ranking workers run']);
  assert.deepEqual(notReadyReasons(state({ pool: { threads: 2, engineBuilt: false } })), ['the ranking workers are loading the catalog']);
  assert.deepEqual(notReadyReasons(state({ builder: { running: true, stats: { positions: { demo: 0 } } } })), ["environment 'shop' has no model serving yet (the model builder is loading)"]);
  assert.equal(notReadyReasons(state({ builder: { running: true, stats: undefined } })).length, 2, 'both environments wait for the first report');
});
