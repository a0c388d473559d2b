// Write transactions and lmdb-js's free-list abort (store/commit.ts). The abort cannot be caused
// on demand (it depends on the free list's shape and an uninitialised variable), so the first
// commit of each test fails the way lmdb-js reports it, and every other commit is a real one on a
// real environment: what the retry must keep (one stored copy, the counters read again) is
// checked in LMDB.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { ABORT, open, type RootDatabase } from 'lmdb';
import { transactionRetried, transactionSyncRetried } from '../../../src/store/commit.ts';
import { tempDir } from '../../helpers/server.ts';

const MDB_BAD_TXN = -30782;
const MDB_MAP_FULL = -30792;
const nativeError = (code: number, message: string) => Object.assign(new Error(message), { code });
const FREELIST_ABORT = () => nativeError(MDB_BAD_TXN, 'MDB_BAD_TXN: Transaction must abort, has a child, or is invalid: reserved freelist had a data entry with zero-size, last id 33');

/** The free-list retry warnings `run` causes (one per failed commit retried). */
async function retryWarnings(run: () => Promise<void> | void): Promise<number> {
  let n = 0;
  const onWarning = (w: Error & { code?: string }) => void (w.code === 'AFFINITY_LMDB_FREELIST_RETRY' && n++);
  process.on('warning', onWarning);
  try {
    await run();
    await new Promise((r) => setImmediate(r));
  } finally {
    process.off('warning', onWarning);
  }
  return n;
}

async function withRoot(run: (root: RootDatabase) => Promise<void>): Promise<void> {
  const dir = tempDir();
  const root = open({ path: dir, mapSize: 64 * 1024 ** 2 });
  try {
    await run(root);
  } finally {
    await root.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `root` whose first `failing` transactions form one commit that fails with `failure`, as lmdb-js
 * reports it: their writes run and are discarded, each is rejected with a generic error, and the
 * native one is behind the `commitError` promise they share. Later transactions are real.
 */
function failingFirstCommit(root: RootDatabase, failure: Error, failing = 1): Pick<RootDatabase, 'transaction'> {
  const commitError = Promise.reject(failure);
  commitError.catch(() => {});
  let tries = 0;
  return {
    transaction: ((write: () => unknown) => {
      if (tries++ >= failing) return root.transaction(write);
      // A child transaction, so that ABORT discards the write as the failed commit does.
      return root
        .childTransaction(() => {
          write();
          return ABORT;
        })
        .then(() => Promise.reject(Object.assign(new Error('Commit failed (see commitError for details)'), { commitError })));
    }) as RootDatabase['transaction'],
  };
}

test('a commit aborted by the free list: its writes run again once, stored once, counters read afresh; one warning', async () => {
  await withRoot(async (root) => {
    root.putSync('seq', 10);
    const failing = failingFirstCommit(root, FREELIST_ABORT(), 2);
    let runs = 0;
    const append = (label: string) =>
      transactionRetried(failing, () => {
        runs++;
        const next = (root.get('seq') as number) + 1;
        root.put('seq', next);
        root.put(['event', next], label);
        return next;
      });
    let results: number[] = [];
    const warned = await retryWarnings(async () => {
      results = await Promise.all([append('a'), append('b')]);
    });
    assert.equal(runs, 4);
    assert.deepEqual(results.sort(), [11, 12]);
    assert.equal(root.get('seq'), 12);
    const stored = [...root.getRange({ start: ['event'], end: ['event', 1e9] })].map(({ value }) => value as string);
    assert.deepEqual(stored.sort(), ['a', 'b']);
    assert.equal(warned, 1, 'one failed commit, one warning');
  });
});

test('another commit failure (a full map) is not retried: the caller gets it and nothing is stored', async () => {
  await withRoot(async (root) => {
    let runs = 0;
    const warned = await retryWarnings(() =>
      assert.rejects(
        transactionRetried(failingFirstCommit(root, nativeError(MDB_MAP_FULL, 'MDB_MAP_FULL: Environment mapsize limit reached')), () => {
          runs++;
          root.put('k', 'v');
        }),
        /Commit failed/,
      ),
    );
    assert.equal(runs, 1);
    assert.equal(root.get('k'), undefined);
    assert.equal(warned, 0);
  });
});

test('an error thrown by the write itself is not retried', async () => {
  await withRoot(async (root) => {
    let runs = 0;
    await assert.rejects(
      transactionRetried(root, () => {
        runs++;
        throw new Error('bad write');
      }),
      /bad write/,
    );
    assert.equal(runs, 1);
  });
});

test('a synchronous commit aborted by the free list runs again once; other errors pass through', async () => {
  await withRoot(async (root) => {
    let tries = 0;
    const failingOnce: Pick<RootDatabase, 'transactionSync'> = {
      transactionSync: ((write: () => unknown) => {
        if (tries++ === 0) {
          root.transactionSync(() => {
            write();
            return ABORT;
          });
          throw FREELIST_ABORT();
        }
        return root.transactionSync(write);
      }) as RootDatabase['transactionSync'],
    };
    let runs = 0;
    let stored = 0;
    const warnedRetried = await retryWarnings(() => {
      stored = transactionSyncRetried(failingOnce, () => {
        runs++;
        root.put('n', runs);
        return runs;
      });
    });
    assert.equal(stored, 2);
    assert.equal(root.get('n'), 2);
    assert.equal(warnedRetried, 1);
    const warnedOther = await retryWarnings(() =>
      assert.throws(
        () =>
          transactionSyncRetried(root, () => {
            throw nativeError(MDB_MAP_FULL, 'MDB_MAP_FULL');
          }),
        /MDB_MAP_FULL/,
      ),
    );
    assert.equal(warnedOther, 0);
  });
});
