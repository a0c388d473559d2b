// A ranking worker that cannot start (here: an install whose WASM kernel is damaged) fails the
// start cleanly: the service, already listening, logs `failed to start` with the cause, stops
// gracefully (`stopped`: what it acknowledged is committed, the store closed) and exits 1. Piscina
// reports such a worker as an `error` event; unheard, it ended the process as an uncaught
// exception, without the stop.
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Store } from '../../src/store/open.ts';
import { exitCodeWithin, startServer, tempDir } from '../helpers/server.ts';

const ROOT = join(import.meta.dirname, '..', '..');

/** A copy of this checkout's build (what `npm start` runs), node_modules shared. */
function installCopy(): string {
  const root = tempDir('affinity-install-');
  for (const dir of ['bin', 'dist', 'build', 'proto']) cpSync(join(ROOT, dir), join(root, dir), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(root, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
  return root;
}

test('a ranking worker that cannot start: failed to start with the cause, a graceful stop, exit 1, acknowledged events kept', async (t) => {
  const root = installCopy();
  writeFileSync(join(root, 'build', 'kernel.wasm'), 'not a WebAssembly module');
  const dataDir = tempDir();
  mkdirSync(dataDir, { recursive: true });
  const server = await startServer({ root, dataDir, waitFor: 'listening' });
  // Hooks run in order: the server stops before its directories go.
  t.after(() => server.close());
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  t.after(() => rmSync(root, { recursive: true, force: true }));

  // Taken while the workers fail (or just before: the race is the point), or refused once the stop began.
  const event = { event_type: 'page_visit', event_id: 'early', page_type: 'home', device_id: 'd-early', user_id: 'u-early', channel: 'www' };
  const posted = await fetch(`${server.url}/api/demo/events`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ events: [event] }) }).then(
    (res) => res.status,
    () => 'refused',
  );

  assert.equal(await exitCodeWithin(server, undefined, 'the failed start'), 1, server.logs.join('\n'));
  const messages = server.logs.flatMap((line) => {
    try {
      return [JSON.parse(line) as { msg?: string; err?: { message?: string } }];
    } catch {
      return [];
    }
  });
  const failed = messages.find((m) => m.msg === 'failed to start');
  assert.ok(failed, `a 'failed to start' line:\n${server.logs.join('\n')}`);
  assert.match(JSON.stringify(failed.err), /WebAssembly|wasm|magic/i, 'it names the cause');
  const order = messages.map((m) => m.msg).filter((msg) => msg === 'listening' || msg === 'failed to start' || msg === 'stopped');
  assert.deepEqual(order, ['listening', 'failed to start', 'stopped'], server.logs.join('\n'));
  assert.ok(!server.logs.some((line) => /Uncaught|uncaughtException/.test(line)), 'no uncaught exception');

  if (posted === 200) {
    const store = new Store({ dataDir, mapSizeBytes: 64 * 1024 ** 2 });
    try {
      assert.ok([...store.eventIds.getKeys({ start: ['demo', 'early'], end: ['demo', 'early\u0000'] })].length === 1, 'the acknowledged event is stored');
    } finally {
      await store.close();
    }
  } else {
    assert.ok(posted === 'refused' || posted === 503, `the event was answered ${posted}`);
  }
});
