import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CONSUMED_STRIDE, MAX_ENTRIES, MAX_VALUES, NoticeJournal, NoticeReader, type Notice, type NoticeHandlers } from '../../../src/serving/notices.ts';

const model = (environment: string): Notice => ({ kind: 'model', environment });

/** A reader that records what it applied. */
function recording() {
  const applied: string[] = [];
  let lost = 0;
  const handlers: NoticeHandlers = {
    consumed: (n) => applied.push(`consumed ${n.environment}`),
    rows: (n) => applied.push(`rows ${n.environment} ${[...n.ix].join(',')}`),
    model: (n) => applied.push(`model ${n.environment}`),
    lost: () => lost++,
  };
  return { reader: new NoticeReader(), handlers, applied, lost: () => lost };
}

test('every worker applies each notice once and in order, however the batches overlap', () => {
  const journal = new NoticeJournal(2);
  const a = recording();
  const b = recording();
  journal.append(model('e1'));
  journal.append({ kind: 'rows', environment: 'e1', ix: Uint32Array.of(3, 4) });
  a.reader.apply(journal.pending(), a.handlers);
  journal.acknowledge(1, a.reader.seq);
  journal.append(model('e2'));
  // Worker 2 has not answered yet: it gets everything; worker 1 gets the older entries again and skips them.
  b.reader.apply(journal.pending(), b.handlers);
  journal.acknowledge(2, b.reader.seq);
  a.reader.apply(journal.pending(), a.handlers);
  journal.acknowledge(1, a.reader.seq);
  const expected = ['model e1', 'rows e1 3,4', 'model e2'];
  assert.deepEqual(a.applied, expected);
  assert.deepEqual(b.applied, expected);
  assert.deepEqual(journal.pending().notices, [], 'acknowledged by every worker: dropped');
  assert.equal(a.lost() + b.lost(), 0);
});

test('a worker that lags holds entries back until it catches up or is forgotten and replaced', () => {
  const journal = new NoticeJournal(2);
  const fast = recording();
  journal.acknowledge(1, 0);
  journal.acknowledge(2, 0);
  journal.append(model('e1'));
  fast.reader.apply(journal.pending(), fast.handlers);
  journal.acknowledge(1, fast.reader.seq);
  assert.equal(journal.pending().notices.length, 1, 'worker 2 has not seen it');
  journal.forget(2);
  assert.equal(journal.pending().notices.length, 1, 'its replacement has not answered yet');
  journal.acknowledge(3, 1);
  assert.equal(journal.pending().notices.length, 0);
});

test('a reader that finds a gap reports the loss and goes on from what it has', () => {
  const r = recording();
  r.reader.apply({ fromSeq: 1, notices: [model('e1')] }, r.handlers);
  r.reader.apply({ fromSeq: 5, notices: [model('e5')] }, r.handlers);
  assert.equal(r.lost(), 1);
  assert.deepEqual(r.applied, ['model e1', 'model e5']);
  assert.equal(r.reader.seq, 5);
});

test('a journal nobody acknowledges stays bounded, and appending to a full one does not copy it each time', () => {
  const journal = new NoticeJournal(1);
  const notice = model('e');
  for (let i = 0; i <= MAX_ENTRIES; i++) journal.append(notice);
  assert.equal(journal.pending().notices.length, MAX_ENTRIES / 2, 'the append past the bound drops the older half at once');
  const started = performance.now();
  for (let i = 0; i < 200_000; i++) journal.append(notice);
  const ms = performance.now() - started;
  assert.ok(journal.pending().notices.length <= MAX_ENTRIES);
  // One copy of 50,000 entries per append took seconds for 200,000 appends; halving takes milliseconds.
  assert.ok(ms < 500, `200,000 appends took ${ms.toFixed(0)} ms`);
});

test('a journal nobody acknowledges stays bounded by the values it holds, not only by its entry count', () => {
  // An event load of 100-event batches and no recommendation request: each entry holds 600 values.
  const journal = new NoticeJournal(1);
  const batch = (n: number): Notice => ({ kind: 'consumed', environment: 'e', entries: Array.from({ length: 100 * CONSUMED_STRIDE }, (_, i) => (i % CONSUMED_STRIDE === 3 ? `item-${n}` : i)) });
  const values = (notices: Notice[]) => notices.reduce((sum, n) => sum + (n.kind === 'consumed' ? n.entries.length : 0), 0);
  let most = 0;
  for (let n = 0; n < 5_000; n++) {
    journal.append(batch(n));
    most = Math.max(most, values(journal.pending().notices));
  }
  assert.ok(most <= MAX_VALUES, `held up to ${most} values`);
  const kept = journal.pending();
  assert.ok(kept.notices.length < 5_000 && kept.notices.length >= MAX_VALUES / 2 / 600 - 1, `${kept.notices.length} entries kept`);
  // The newest are kept, in order; a worker that started at the beginning finds the gap and applies them.
  const last = kept.notices.at(-1)!;
  assert.equal(last.kind === 'consumed' && last.entries[3], 'item-4999');
  const r = recording();
  r.reader.apply({ fromSeq: 1, notices: [model('e')] }, r.handlers);
  r.reader.apply(kept, r.handlers);
  assert.equal(r.lost(), 1);
  assert.equal(r.applied.length, 1 + kept.notices.length);
});
