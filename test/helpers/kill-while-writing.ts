// Kills (SIGKILL) a writer process at a random moment while it rewrites a snapshot over and over
// (test/helpers/*-snapshot-writer.ts: a line on stdout after each commit), three times, each in a
// fresh data directory, and hands each directory's store to `check` after the kill.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_CONFIG } from '../../src/config/defaults.ts';
import { Store } from '../../src/store/open.ts';
import { tempDir } from './server.ts';

export async function killWhileWriting(t: TestContext, writer: string, check: (store: Store) => void): Promise<void> {
  for (let round = 0; round < 3; round++) {
    const dir = tempDir();
    try {
      const child = spawn(process.execPath, ['--import', 'tsx', writer, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
      const exited = new Promise((resolve) => child.on('exit', resolve));
      let written = 0;
      createInterface({ input: child.stdout! }).on('line', () => written++);
      while (written < 2) await sleep(10);
      const killAfterMs = Math.floor(Math.random() * 300);
      t.diagnostic(`round ${round}: kill -9 ${killAfterMs} ms after the second commit`);
      await sleep(killAfterMs);
      child.kill('SIGKILL');
      await exited;
      const store = new Store({ ...DEFAULT_CONFIG.store, dataDir: dir });
      try {
        check(store);
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
