// A file drop applies exactly once across a crash: the server is killed (SIGKILL) in the middle
// of a file and restarted on the same data directory; the import resumes after the last batch
// it committed, so every row is applied once (no duplicates, nothing lost). An upload cut off by
// a crash before its 202 is discarded at the restart.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { apiClient, waitFor } from '../helpers/api.ts';
import { getToken } from '../helpers/auth.ts';
import { sharedDataDir, startServer } from '../helpers/server.ts';
import { readChanges } from '../helpers/store-snapshot.ts';

const ROWS = 20_000;
const CONFIG = { ingest: { imports: { batchRows: 50, scanIntervalMs: 50 } } };

interface ImportView {
  import_id: string;
  state: string;
  rows: number;
  created: number;
  updated: number;
  unchanged: number;
  rejected: number;
  report_file: string | null;
}

test('a server killed in the middle of a file resumes it: every row applied exactly once', async (t) => {
  const shared = sharedDataDir();
  t.after(() => shared.close());
  const first = shared.track(await startServer({ dataDir: shared.dataDir, config: CONFIG }));
  const client = first.demoClient!;
  const token = await getToken(first, client);
  const lines = ['operation,item_id,item_type,title'];
  for (let i = 0; i < ROWS; i++) lines.push(`ADD,crash-${i},article,Item ${i}`);
  const res = await fetch(`${first.url}/api/demo/imports`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'text/csv' }, body: lines.join('\n') });
  assert.equal(res.status, 202);
  const { import_id: importId } = (await res.json()) as ImportView;

  const api = apiClient(first, token);
  const progress = await waitFor('the first committed batches', async () => {
    const view = (await api<ImportView>('GET', `/api/demo/imports/${importId}`)).body;
    return view.rows > 0 ? view : undefined;
  }, 20_000, 5);
  first.proc.kill('SIGKILL');
  await first.exited;
  assert.ok(progress.rows < ROWS, `killed in the middle (${progress.rows} rows committed)`);

  const second = shared.track(await startServer({ dataDir: shared.dataDir, config: CONFIG }));
  const api2 = apiClient(second, await getToken(second, client));
  const done = await waitFor('the resumed import', async () => {
    const view = (await api2<ImportView>('GET', `/api/demo/imports/${importId}`)).body;
    return view.report_file !== null ? view : undefined;
  });
  assert.equal(done.state, 'done');
  assert.equal(done.rows, ROWS);
  assert.equal(done.created, ROWS, 'every row created once');
  assert.equal(done.unchanged, 0, 'no row applied a second time');
  assert.equal(done.updated, 0);
  assert.equal(done.rejected, 0);
  const resumed = second.logs.map((l) => JSON.parse(l) as { msg?: string; import_id?: string; resume_at_row?: number }).find((l) => l.msg === 'import started' && l.import_id === importId);
  assert.ok(resumed && resumed.resume_at_row! > 0 && resumed.resume_at_row! < ROWS, `resumed at row ${resumed?.resume_at_row}`);

  const creates = (await readChanges(shared.dataDir)).filter((c) => String(c.itemId).startsWith('crash-'));
  assert.equal(creates.length, ROWS, 'one change record per row');
  assert.ok(creates.every((c) => c.op === 'create'));
  assert.equal(new Set(creates.map((c) => c.itemId)).size, ROWS, 'no item twice, none lost');
  assert.ok(readdirSync(join(shared.dataDir, 'inbox', 'demo', 'done')).includes(`${importId}--upload.csv`));
});

test('an upload cut off by a crash before its 202 is discarded at the restart', async (t) => {
  const shared = sharedDataDir();
  t.after(() => shared.close());
  const first = shared.track(await startServer({ dataDir: shared.dataDir }));
  const client = first.demoClient!;
  const token = await getToken(first, client);
  const uploads = join(shared.dataDir, 'inbox', 'demo', '.uploads');
  let release: () => void = () => undefined;
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      controller.enqueue(new TextEncoder().encode('operation,item_id,item_type\nADD,cut-1,article\n'));
      await new Promise<void>((resolve) => (release = resolve));
      controller.close();
    },
  });
  const pending = fetch(`${first.url}/api/demo/imports`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'text/csv' },
    body,
    duplex: 'half',
  } as RequestInit).catch((err: unknown) => err);
  await waitFor('the partial upload on disk', async () => (readdirSync(uploads).length > 0 ? true : undefined));
  first.proc.kill('SIGKILL');
  await first.exited;
  release();
  await pending;

  const second = shared.track(await startServer({ dataDir: shared.dataDir }));
  const api = apiClient(second, await getToken(second, client));
  assert.deepEqual(readdirSync(uploads), [], 'the partial file is removed');
  const list = await api<{ imports: ImportView[] }>('GET', '/api/demo/imports');
  assert.deepEqual(list.body.imports, [], 'no import was recorded for it');
  assert.equal((await api('GET', '/api/demo/items/article/cut-1')).status, 404);
});
