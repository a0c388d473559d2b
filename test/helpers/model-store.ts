// A store in a fresh temp folder for the builder's state classes (model/*.ts) to write to, and
// everything they wrote, for comparing two runs record by record.
import { rmSync } from 'node:fs';
import { Store } from '../../src/store/open.ts';
import { tempDir } from './server.ts';

/** Runs `run` on a new store; closes it and removes its folder afterwards, whatever happens. */
export async function withModelStore<T>(run: (store: Store) => T | Promise<T>): Promise<T> {
  const dir = tempDir();
  const store = new Store({ dataDir: dir, mapSizeBytes: 64 * 1024 ** 2 });
  try {
    return await run(store);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every record of the model (bytes as hex) and model-state databases, by database and key. */
export function storedModel(store: Store): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const { key, value } of store.model.getRange({})) out.set(`model ${JSON.stringify(key)}`, Buffer.from(value).toString('hex'));
  for (const { key, value } of store.modelState.getRange({})) out.set(`model-state ${JSON.stringify(key)}`, value);
  return out;
}
