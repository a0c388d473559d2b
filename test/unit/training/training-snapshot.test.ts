// Training snapshots (training/training-snapshot.ts): a pass encodes and decodes exactly; bytes
// that do not hold a whole pass are refused; and a process killed (SIGKILL) at a random moment
// while it rewrites a multi-chunk snapshot over and over leaves a snapshot that reads back
// whole and sound, one of the two it was writing, never a mix.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { DEFAULT_CONFIG } from '../../../src/config/defaults.ts';
import { decodePass, encodePass, readTrainingSnapshot, type TrainingPass, writeTrainingSnapshot } from '../../../src/training/training-snapshot.ts';
import { Store } from '../../../src/store/open.ts';
import { snapshotPass } from '../../helpers/snapshot-pass.ts';
import { tempDir } from '../../helpers/server.ts';
import { killWhileWriting } from '../../helpers/kill-while-writing.ts';

const WRITER = new URL('../../helpers/snapshot-writer.ts', import.meta.url).pathname;

/** The same pass: header, consumers, links, and the consumption table's entries (its spare room aside). */
function assertSamePass(actual: TrainingPass, expected: TrainingPass): void {
  assert.deepEqual([actual.position, actual.newestSec, actual.consumers, actual.deviceUser], [expected.position, expected.newestSec, expected.consumers, expected.deviceUser]);
  assert.equal(actual.consumed.length, expected.consumed.length);
  for (const field of ['who', 'ix', 'weight', 'sec'] as const) {
    assert.deepEqual(actual.consumed[field].subarray(0, actual.consumed.length), expected.consumed[field].subarray(0, expected.consumed.length), field);
  }
}

test('a pass decodes to what was encoded; a cut or padded one is refused', () => {
  const pass = snapshotPass(7);
  const encoded = encodePass(pass);
  assert.ok(encoded.length > 8 * 1024 * 1024, `${encoded.length} bytes: several chunks`);
  const decoded = decodePass(encoded);
  assertSamePass(decoded, pass);
  assert.ok(encodePass(decoded).equals(encoded), 'encodes to the same bytes');
  assert.throws(() => decodePass(encoded.subarray(0, encoded.length - 3)), /ends early/);
  assert.throws(() => decodePass(Buffer.concat([encoded, Buffer.from([0])])), /after its end/);
});

test('a snapshot is used only under the settings it was made with; one under others is no fault', async () => {
  const dir = tempDir();
  const store = new Store({ ...DEFAULT_CONFIG.store, dataDir: dir });
  try {
    const pass = snapshotPass(5);
    writeTrainingSnapshot(store, 'demo', 'weights A', pass.position, encodePass(pass));
    assertSamePass(readTrainingSnapshot(store, 'demo', 'weights A').pass!, pass);
    assert.deepEqual(readTrainingSnapshot(store, 'demo', 'weights B'), {});
    assert.deepEqual(readTrainingSnapshot(store, 'other', 'weights A'), {}, 'another environment has none');
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('kill -9 while a snapshot is rewritten leaves one whole snapshot, never a mix', async (t) => {
  const expected = new Map([1000, 2000].map((position) => [position, encodePass(snapshotPass(position))]));
  await killWhileWriting(t, WRITER, (store) => {
    const { pass, problem } = readTrainingSnapshot(store, 'demo', 'fingerprint');
    assert.equal(problem, undefined);
    assert.ok(pass && expected.has(pass.position), `a snapshot of one of the two passes (${pass?.position})`);
    assert.ok(encodePass(pass).equals(expected.get(pass.position)!), 'exactly that pass');
  });
});
