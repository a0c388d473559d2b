// The data directory's reports environment (store/open.ts): a directory written before it, with
// the report records in `model/`, has them moved to `reports/` by moveReportRecords (the model
// thread's first step: msgpack records and the snapshot's raw chunks), every other record of
// `model/` untouched; a move whose copy committed but whose removal did not (a crash between the
// two environments' transactions) keeps the reports environment's records and only removes what
// `model/` still holds.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { open } from 'lmdb';
import { modelStorePath, reportsStorePath, Store } from '../../../src/store/open.ts';
import { moveReportRecords, reportsCopiedKey, rollupKey } from '../../../src/store/report-keys.ts';
import { tempDir } from '../../helpers/server.ts';

const STORE = { mapSizeBytes: 64 * 1024 ** 2 };
const ROLLUP = rollupKey('demo', 'd', '2026-11-28', 'builder');
const CLICK = ['demo', 'click', 'u1', 'article\u0000a1'];
const REPORTS_POSITION = ['demo', 'pos', 'reports'];
const SNAPSHOT_CHUNK = ['demo', 'repsnap', 'chunk', 0];
const ROW = ['demo', 'nb', 7];
const LINK = ['demo', 'link', 'd1'];
const EVENTS_POSITION = ['demo', 'pos', 'events'];

/** Writes the model environment as it was before the reports environment: report records beside the model's. */
async function writeOldLayout(dataDir: string, clicks: number): Promise<void> {
  const root = open({ path: modelStorePath(dataDir), maxDbs: 4 });
  const state = root.openDB({ name: 'model-state' });
  const model = root.openDB<Buffer>({ name: 'model', encoding: 'binary' });
  await root.transaction(() => {
    state.put(ROLLUP, { 'list_name\u0000popular': { clicks } });
    state.put(CLICK, { t: 1, list_name: 'popular' });
    state.put(REPORTS_POSITION, 41);
    state.put(LINK, 'u1');
    state.put(EVENTS_POSITION, 42);
    model.put(SNAPSHOT_CHUNK, Buffer.from('snapshot bytes'));
    model.put(ROW, Buffer.from('row seven'));
  });
  await root.close();
}

/** Opens the store, moves the environment's report records as the model thread does at start, then checks. */
async function withStore(dataDir: string, check: (store: Store) => void): Promise<void> {
  const store = new Store({ ...STORE, dataDir });
  try {
    moveReportRecords(store, 'demo');
    check(store);
  } finally {
    await store.close();
  }
}

test('report records written in model/ move to reports/; the model records stay; opened again, nothing moves back', async () => {
  const dataDir = tempDir();
  try {
    await writeOldLayout(dataDir, 3);
    const moved = (store: Store) => {
      assert.deepEqual(store.reportState.get(ROLLUP), { 'list_name\u0000popular': { clicks: 3 } });
      assert.deepEqual(store.reportState.get(CLICK), { t: 1, list_name: 'popular' });
      assert.equal(store.reportState.get(REPORTS_POSITION), 41);
      assert.equal(Buffer.from(store.reportBlobs.get(SNAPSHOT_CHUNK)!).toString(), 'snapshot bytes');
      for (const key of [ROLLUP, CLICK, REPORTS_POSITION]) assert.equal(store.modelState.get(key), undefined, `${JSON.stringify(key)} left model-state`);
      assert.equal(store.model.get(SNAPSHOT_CHUNK), undefined, 'the snapshot chunk left model');
      assert.equal(store.modelState.get(LINK), 'u1');
      assert.equal(store.modelState.get(EVENTS_POSITION), 42);
      assert.equal(Buffer.from(store.model.get(ROW)!).toString(), 'row seven');
    };
    await withStore(dataDir, moved);
    await withStore(dataDir, moved);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a move whose copy committed keeps the reports environment and removes what model/ still holds', async () => {
  const dataDir = tempDir();
  try {
    await writeOldLayout(dataDir, 3);
    // The copy committed (with newer counts since), and the process died before the removal.
    const reports = open({ path: reportsStorePath(dataDir), maxDbs: 4 });
    const state = reports.openDB({ name: 'report-state' });
    await reports.transaction(() => {
      state.put(ROLLUP, { 'list_name\u0000popular': { clicks: 5 } });
      state.put(reportsCopiedKey('demo'), true);
    });
    await reports.close();
    await withStore(dataDir, (store) => {
      assert.deepEqual(store.reportState.get(ROLLUP), { 'list_name\u0000popular': { clicks: 5 } });
      assert.equal(store.reportState.get(CLICK), undefined, 'not copied again');
      assert.equal(store.modelState.get(ROLLUP), undefined);
      assert.equal(store.modelState.get(CLICK), undefined);
      assert.equal(store.model.get(SNAPSHOT_CHUNK), undefined);
      assert.equal(store.modelState.get(LINK), 'u1');
      assert.equal(store.reportState.get(reportsCopiedKey('demo')), undefined, 'the note is removed with the move');
    });
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
