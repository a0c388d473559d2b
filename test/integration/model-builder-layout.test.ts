// The model builder's item layout under a file drop (issue 12): changed items wait in memory for
// the layout write (a content vector and an item view entry each), which is paced; past a bound
// they are written at once, whatever the pace. A 1,000,000-row import held ~900,000 of them for
// one write. The builder runs in a process of its own (test/helpers/layout-bound.ts) with a
// ten-minute pace, so only the bound can write the layout within the test.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { tempDir } from '../helpers/server.ts';

const run = promisify(execFile);
const HELPER = fileURLToPath(new URL('../helpers/layout-bound.ts', import.meta.url));
const ITEMS = 300;

/** The catalog change position the layout writes covered 5 s after the builder started. */
async function writtenAfterStart(bound: number): Promise<number> {
  const dataDir = tempDir('affinity-layout-');
  try {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', HELPER, dataDir, String(ITEMS), String(bound), '5000']);
    return JSON.parse(stdout) as number;
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

test('more changed items than the bound are written at once; fewer wait for the pace', async () => {
  const [over, under] = await Promise.all([writtenAfterStart(100), writtenAfterStart(1000)]);
  assert.equal(over, ITEMS, '300 changed items over a bound of 100: the layout covering all of them is written');
  assert.equal(under, 0, '300 changed items under a bound of 1,000: nothing written before the ten-minute pace');
});
