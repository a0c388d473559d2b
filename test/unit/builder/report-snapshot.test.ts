// Report state snapshots (builder/report-snapshot.ts): a state encodes and decodes exactly; bytes that
// do not hold a whole state are refused; and a process killed (SIGKILL) at a random moment while it
// rewrites a multi-chunk snapshot over and over leaves a snapshot that reads back whole and sound,
// one of the two it was writing, never a mix.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeReportSnapshot, encodeReportSnapshot, readReportSnapshot } from '../../../src/builder/report-snapshot.ts';
import { killWhileWriting } from '../../helpers/kill-while-writing.ts';
import { reportSnapshotOf } from '../../helpers/report-snapshot-state.ts';

const WRITER = new URL('../../helpers/report-snapshot-writer.ts', import.meta.url).pathname;

test('a report state decodes to what was encoded, absent labels included; a cut or padded one is refused', () => {
  const state = reportSnapshotOf(7, 30_000);
  const encoded = encodeReportSnapshot(state);
  const decoded = decodeReportSnapshot(encoded);
  assert.deepEqual(decoded, state);
  assert.ok(encodeReportSnapshot(decoded).equals(encoded), 'encodes to the same bytes');
  assert.throws(() => decodeReportSnapshot(encoded.subarray(0, encoded.length - 3)), /ends early/);
  assert.throws(() => decodeReportSnapshot(Buffer.concat([encoded, Buffer.from([0])])), /after its end/);
});

test('kill -9 while a report state snapshot is rewritten leaves one whole snapshot, never a mix', async (t) => {
  const expected = new Map([1000, 2000].map((position) => [position, encodeReportSnapshot(reportSnapshotOf(position))]));
  assert.ok(expected.get(1000)!.length > 8 * 1024 * 1024, `${expected.get(1000)!.length} bytes: three chunks of 4 MB or more`);
  await killWhileWriting(t, WRITER, (store) => {
    const { snapshot, problem } = readReportSnapshot(store, 'demo');
    assert.equal(problem, undefined);
    assert.ok(snapshot && expected.has(snapshot.position), `a snapshot of one of the two states (${snapshot?.position})`);
    assert.ok(encodeReportSnapshot(snapshot).equals(expected.get(snapshot.position)!), 'exactly that state');
  });
});
