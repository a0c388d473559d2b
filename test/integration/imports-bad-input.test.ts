// Every bad input to the import endpoints against the real server: the status, a problem body
// naming what is wrong, a store that is byte for byte unchanged, and no file left in the inbox.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { getToken } from '../helpers/auth.ts';
import { assertFieldErrors, assertProblem } from '../helpers/problem.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { snapshotStore, assertSameStore } from '../helpers/store-snapshot.ts';

const MAX_UPLOAD = 4096;
const CSV = 'operation,item_id,item_type\nADD,bad-1,article\n';

interface BadInput {
  name: string;
  method: string;
  path: string;
  body?: string;
  headers?: Record<string, string>;
  noToken?: boolean;
  status: number;
  kind: string;
  errors?: Array<[string, RegExp?]>;
}

const IMPORTS = '/api/demo/imports';
const CASES: BadInput[] = [
  { name: 'POST import without a token answers 401', method: 'POST', path: IMPORTS, body: CSV, headers: { 'Content-Type': 'text/csv' }, noToken: true, status: 401, kind: 'unauthorized' },
  { name: 'POST import with a malformed Authorization header answers 401', method: 'POST', path: IMPORTS, body: CSV, headers: { 'Content-Type': 'text/csv', Authorization: 'Basic abc' }, noToken: true, status: 401, kind: 'unauthorized' },
  { name: 'POST import to an environment the token does not grant answers 401', method: 'POST', path: '/api/elsewhere/imports', body: CSV, headers: { 'Content-Type': 'text/csv' }, status: 401, kind: 'unauthorized' },
  { name: 'POST import as text/plain answers 415', method: 'POST', path: IMPORTS, body: CSV, headers: { 'Content-Type': 'text/plain' }, status: 415, kind: 'unsupported-media-type' },
  { name: 'POST import without a Content-Type answers 415', method: 'POST', path: IMPORTS, body: CSV, status: 415, kind: 'unsupported-media-type' },
  { name: 'POST import with Content-Encoding gzip answers 415', method: 'POST', path: IMPORTS, body: CSV, headers: { 'Content-Type': 'text/csv', 'Content-Encoding': 'gzip' }, status: 415, kind: 'unsupported-media-type' },
  { name: 'POST import with an empty body answers 400', method: 'POST', path: IMPORTS, body: '', headers: { 'Content-Type': 'text/csv' }, status: 400, kind: 'body-required' },
  { name: 'POST import declaring more than the upload limit answers 413', method: 'POST', path: IMPORTS, body: `${CSV}${'x'.repeat(MAX_UPLOAD)}`, headers: { 'Content-Type': 'text/csv' }, status: 413, kind: 'body-too-large' },
  { name: 'GET an unknown import answers 404', method: 'GET', path: `${IMPORTS}/imp_00000000000000000000000000000000`, status: 404, kind: 'import-not-found' },
  { name: 'GET an import id of 5000 characters answers 404', method: 'GET', path: `${IMPORTS}/${'i'.repeat(5000)}`, status: 404, kind: 'import-not-found' },
  { name: 'GET an import with an unknown query parameter answers 400', method: 'GET', path: `${IMPORTS}/imp_x?page=2`, status: 400, kind: 'invalid-request', errors: [['page', /not a query parameter/]] },
  { name: 'GET an import with rejected_limit 0 answers 400', method: 'GET', path: `${IMPORTS}/imp_x?rejected_limit=0`, status: 400, kind: 'invalid-request', errors: [['rejected_limit', /integer from 1/]] },
  { name: 'GET imports with limit abc answers 400', method: 'GET', path: `${IMPORTS}?limit=abc`, status: 400, kind: 'invalid-request', errors: [['limit']] },
  { name: 'GET imports without a token answers 401', method: 'GET', path: IMPORTS, noToken: true, status: 401, kind: 'unauthorized' },
  { name: 'DELETE an import answers 405', method: 'DELETE', path: `${IMPORTS}/imp_x`, status: 405, kind: 'method-not-allowed' },
];

let server: TestServer;
let token: string;

before(async () => {
  server = await startServer({
    config: { ingest: { imports: { maxUploadBytes: MAX_UPLOAD } }, environments: { demo: { itemTypes: ['article'] }, elsewhere: { itemTypes: ['article'] } } },
  });
  token = await getToken(server);
});
after(() => server?.close());

function inboxFiles(): string[] {
  const root = join(server.dataDir, 'inbox', 'demo');
  return ['', 'processing', '.uploads', 'done', 'failed'].flatMap((folder) => readdirSync(join(root, folder), { withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(folder, e.name)));
}

describe('import endpoints refuse bad input and change nothing', () => {
  for (const c of CASES) {
    test(c.name, async () => {
      const before = await snapshotStore(server.dataDir);
      const headers: Record<string, string> = { ...(c.noToken ? {} : { Authorization: `Bearer ${token}` }), ...c.headers };
      const init: RequestInit = { method: c.method, headers };
      if (c.body !== undefined) init.body = c.body;
      const res = await fetch(`${server.url}${c.path}`, init);
      const problem = await assertProblem(res, c.status, c.kind);
      if (c.errors) assertFieldErrors(problem, c.errors);
      else assert.equal(problem.errors, undefined, JSON.stringify(problem.errors));
      assertSameStore(await snapshotStore(server.dataDir), before, 'the store is unchanged');
      assert.deepEqual(inboxFiles(), [], 'no file is left in the inbox');
    });
  }

  test('POST import of a chunked body past the upload limit answers 413 and keeps nothing', async () => {
    const before = await snapshotStore(server.dataDir);
    const chunk = new TextEncoder().encode('x'.repeat(1024));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 8) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const res = await fetch(`${server.url}${IMPORTS}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'text/csv' },
      body,
      duplex: 'half',
    } as RequestInit).catch((err: unknown) => err);
    // The server answers 413 and closes; a client still sending may see the reset instead.
    if (res instanceof Response) await assertProblem(res, 413, 'body-too-large');
    assertSameStore(await snapshotStore(server.dataDir), before, 'the store is unchanged');
    assert.deepEqual(inboxFiles(), [], 'no file is left in the inbox');
    assert.equal((await fetch(`${server.url}/health`)).status, 200);
  });
});
