// The data directory's model environment (store/open.ts): a directory written before the split,
// with the model databases in `db/`, opens with them moved to `model/` whole, the rest of `db/`
// untouched; a move already done (a restart after the copy, before `db/` let go of its copy)
// keeps the model environment's records and only drops the old ones.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { open } from 'lmdb';
import { modelStorePath, Store, storePath } from '../../../src/store/open.ts';
import { tempDir } from '../../helpers/server.ts';

const STORE = { mapSizeBytes: 64 * 1024 ** 2 };

/** Writes records the way a data directory before the split held them: every database in `db/`. */
async function writeOldLayout(dataDir: string, value: string): Promise<void> {
  const root = open({ path: storePath(dataDir), maxDbs: 16 });
  root.openDB({ name: 'model', encoding: 'binary' }).putSync(['demo', 'row', 7], Buffer.from(value));
  root.openDB({ name: 'model-state' }).putSync(['demo', 'pos', 'events'], 41);
  root.openDB({ name: 'items' }).putSync(['demo', 'article', 'a1'], { title: 'kept where it is' });
  await root.close();
}

const hasOldModel = (store: Store) => ['model', 'model-state'].some((name) => store.root.openDB({ name, create: false } as { name: string }) !== undefined);

test('model databases written in db/ move to model/ whole; the rest of db/ stays', async () => {
  const dataDir = tempDir();
  try {
    await writeOldLayout(dataDir, 'row seven');
    const store = new Store({ ...STORE, dataDir });
    try {
      assert.equal(Buffer.from(store.model.get(['demo', 'row', 7])!).toString(), 'row seven');
      assert.equal(store.modelState.get(['demo', 'pos', 'events']), 41);
      assert.deepEqual(store.items.get(['demo', 'article', 'a1']), { title: 'kept where it is' });
      assert.equal(hasOldModel(store), false, 'db/ no longer holds the model databases');
    } finally {
      await store.close();
    }
    // Opened again: nothing left to move, the records stay.
    const again = new Store({ ...STORE, dataDir });
    try {
      assert.equal(Buffer.from(again.model.get(['demo', 'row', 7])!).toString(), 'row seven');
      assert.equal(again.modelState.get(['demo', 'pos', 'events']), 41);
    } finally {
      await again.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a move whose copy committed keeps the model environment and drops what db/ still holds', async () => {
  const dataDir = tempDir();
  try {
    await writeOldLayout(dataDir, 'stale copy');
    // The copy's transaction committed (with newer records since), and the process died before the drop.
    const model = open({ path: modelStorePath(dataDir), maxDbs: 4 });
    model.openDB({ name: 'model', encoding: 'binary' }).putSync(['demo', 'row', 7], Buffer.from('newer'));
    model.openDB({ name: 'model-state' }).putSync(['demo', 'pos', 'events'], 99);
    await model.close();
    const store = new Store({ ...STORE, dataDir });
    try {
      assert.equal(Buffer.from(store.model.get(['demo', 'row', 7])!).toString(), 'newer');
      assert.equal(store.modelState.get(['demo', 'pos', 'events']), 99);
      assert.equal(hasOldModel(store), false);
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
