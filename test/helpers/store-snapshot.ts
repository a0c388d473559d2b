// Reads every record of the data directory's LMDB databases in the test process (LMDB allows
// a second process beside the server), so a test can assert that a rejected request changed
// nothing at all.
import { join } from 'node:path';
import { open } from 'lmdb';

const DATABASES = ['items', 'item-index', 'index-items', 'changes', 'clients', 'meta'];

export async function snapshotStore(dataDir: string): Promise<string> {
  const root = open({ path: join(dataDir, 'db'), maxDbs: 16, readOnly: true });
  try {
    const dump: Record<string, unknown[]> = {};
    for (const name of DATABASES) {
      const db = root.openDB({ name });
      dump[name] = [...db.getRange()].map(({ key, value }) => [key, value]);
    }
    return JSON.stringify(dump);
  } finally {
    await root.close();
  }
}

/** Every change-feed record, oldest first. */
export async function readChanges(dataDir: string): Promise<Array<Record<string, unknown>>> {
  const root = open({ path: join(dataDir, 'db'), maxDbs: 16, readOnly: true });
  try {
    return [...root.openDB({ name: 'changes' }).getRange()].map(({ value }) => value as Record<string, unknown>);
  } finally {
    await root.close();
  }
}
