/**
 * @module store/commit
 * Write transactions that survive lmdb-js's spurious free-list aborts. lmdb-js 3.5.6's bundled
 * LMDB (`mdb_freelist_save`) reads a free-list record's size before checking that its lookup
 * found it; when it did not, a size that happens to be 0 fails the commit with MDB_BAD_TXN
 * ("reserved freelist had a data entry with zero-size"). The install rebuilds lmdb with that fixed
 * (scripts/lmdb-freelist-fix.mjs); this is for a service left on the prebuilt module (no compiler
 * at install). Met on the 1,000,000-item bench data with events posted beside recommendations:
 * one commit in a run failed, and every event POST batched into it answered 500. The commit
 * aborted whole and the next transaction reads the free list again from disk, so the same
 * transaction runs once more: the run that met it again answered no 500. Only that error is
 * retried: others (a full map, a closed store) are the caller's to report.
 */
import type { RootDatabase } from 'lmdb';

/** LMDB's MDB_BAD_TXN: what lmdb-js reports for the free-list abort. */
const MDB_BAD_TXN = -30782;

const isFreelistAbort = (err: unknown): boolean =>
  err instanceof Error && ((err as { code?: unknown }).code === MDB_BAD_TXN || err.message.startsWith('MDB_BAD_TXN'));

/**
 * lmdb-js rejects every write of a failed batched commit with a generic error whose `commitError`
 * promise, one per failed commit, carries the native one; anything else is not a commit failure.
 */
function commitErrorOf(err: unknown): Promise<unknown> | undefined {
  const commitError = (err as { commitError?: unknown } | null)?.commitError;
  return commitError instanceof Promise ? commitError : undefined;
}

/** Failed commits already counted: each of their writes retries, the commit is noted once. */
const noted = new WeakSet<object>();

function noteRetry(native: unknown, commit: object): void {
  if (noted.has(commit)) return;
  noted.add(commit);
  process.emitWarning(`LMDB commit aborted by lmdb-js's free-list bookkeeping, its writes retried (${String((native as Error).message).trim()})`, {
    code: 'AFFINITY_LMDB_FREELIST_RETRY',
  });
}

/** `root.transaction(write)`, run once more if its commit fails with lmdb-js's free-list abort. */
export async function transactionRetried<T>(root: Pick<RootDatabase, 'transaction'>, write: () => T): Promise<T> {
  try {
    return await root.transaction(write);
  } catch (err) {
    const commitError = commitErrorOf(err);
    const native = commitError && (await commitError.then(() => undefined, (e: unknown) => e));
    if (!commitError || !isFreelistAbort(native)) throw err;
    noteRetry(native, commitError);
    return root.transaction(write);
  }
}

/** `root.transactionSync(write)`, run once more if its commit fails with the free-list abort. */
export function transactionSyncRetried<T>(root: Pick<RootDatabase, 'transactionSync'>, write: () => T): T {
  try {
    return root.transactionSync(write);
  } catch (err) {
    if (!isFreelistAbort(err)) throw err;
    noteRetry(err, err as Error);
    return root.transactionSync(write);
  }
}
