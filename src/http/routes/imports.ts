/**
 * @module http/routes/imports
 * File drops over HTTP (DESIGN.md: the upload endpoint feeds the inbox): POST a CSV, JSON,
 * NDJSON or XML file as the body, streamed to disk under `ingest.imports.maxUploadBytes`, and
 * get 202 with an import id once it is durably queued; then read the import's state, counters
 * and rejected rows (paged), or list recent imports. Applying the file is the ingest worker's
 * job, exactly as for a file dropped in the inbox folder.
 */
import { renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../../config/types.ts';
import { E, type FieldError } from '../../domain/errors.ts';
import { inboxDir, newImportRecord, storedNameFor, UPLOAD_TYPES } from '../../ingest/imports/inbox.ts';
import { importSummary } from '../../ingest/imports/report.ts';
import type { IngestWorker } from '../../main-thread/ingest-supervisor.ts';
import { getImport, listImports, newImportId, putImport, rejectedRows, removeImport, type ImportRecord } from '../../store/imports.ts';
import type { Store } from '../../store/open.ts';
import { environmentOf } from '../environment.ts';
import { authorize, type Authorizer } from '../auth.ts';
import { checkContentEncoding } from '../read-body.ts';
import { sendJson, type StatusMap } from '../respond.ts';
import type { HttpServer, RequestInfo } from '../server.ts';
import { receiveUpload } from '../upload.ts';
import { fieldErrorsText } from '../../domain/field-errors.ts';

/** POST: 202; 400 empty body; 401; 404 environment; 413 over the upload limit; 415 media type. */
const STATUS_UPLOAD: StatusMap = { bodyRequired: 400, unauthorized: 401, environmentNotFound: 404, bodyTooLarge: 413, unsupportedMediaType: 415 };
/** GET one / list: 200; 400 bad query; 401; 404. */
const STATUS_READ: StatusMap = { invalidRequest: 400, unauthorized: 401, environmentNotFound: 404, importNotFound: 404 };

const DEFAULT_REJECTED_LIMIT = 100;
const MAX_REJECTED_LIMIT = 10_000;
const DEFAULT_LIST_LIMIT = 50;
const MAX_LIST_LIMIT = 1000;

export interface ImportRoutesDeps {
  store: Store;
  ingest: IngestWorker;
  auth: Authorizer;
  environments: Config['environments'];
  dataDir: string;
  maxUploadBytes: number;
}

async function authorised(deps: ImportRoutesDeps, req: RequestInfo): Promise<string> {
  const environment = req.params[0] ?? '';
  await authorize(deps.auth, req.authorization, environment);
  environmentOf(deps.environments, environment);
  return environment;
}

/** Parses `name=integer` query parameters within bounds; unknown parameters are refused. */
function parseQuery(query: string, bounds: Record<string, [min: number, max: number]>): Record<string, number | undefined> {
  const q = new URLSearchParams(query);
  const errors: FieldError[] = [];
  const out: Record<string, number | undefined> = {};
  for (const key of q.keys()) if (!Object.hasOwn(bounds, key)) errors.push({ path: key, message: 'is not a query parameter of this endpoint' });
  for (const [key, [min, max]] of Object.entries(bounds)) {
    const raw = q.get(key);
    if (raw === null) continue;
    const value = /^\d{1,15}$/.test(raw) ? Number(raw) : NaN;
    if (!(value >= min && value <= max)) errors.push({ path: key, message: `must be an integer from ${min} to ${max}` });
    else out[key] = value;
  }
  if (errors.length > 0) throw E.invalidRequest(fieldErrorsText(errors), errors);
  return out;
}

function reportFile(record: ImportRecord): string | null {
  if (!record.settled) return null;
  return join('inbox', record.environment, record.state === 'done' ? 'done' : 'failed', `${record.storedName}.report.json`);
}

export function registerImportRoutes(server: HttpServer, deps: ImportRoutesDeps): void {
  server.route('post', '/api/:environment/imports', { status: STATUS_UPLOAD }, async (ex, req) => {
    // Until the whole body is read, an error answer closes the connection (the rest is not parsed as a request).
    ex.closeConnection = true;
    const upload = receiveUpload(ex, deps.maxUploadBytes, req.contentLength);
    let record: ImportRecord | undefined;
    try {
      const environment = await authorised(deps, req);
      const mediaType = req.contentType.split(';')[0]!.trim().toLowerCase();
      const type = Object.hasOwn(UPLOAD_TYPES, mediaType) ? UPLOAD_TYPES[mediaType] : undefined;
      if (!type) {
        throw E.unsupportedMediaType(
          `Content-Type '${mediaType || '(none)'}' is not an import format: use ${Object.keys(UPLOAD_TYPES).join(', ')}`,
        );
      }
      checkContentEncoding(req.contentEncoding, false);
      const importId = newImportId();
      const storedName = storedNameFor(importId, `upload${type.extension}`);
      // Recorded before the body arrives, as `receiving`: a restart discards it (no 202 was given).
      record = newImportRecord({ importId, environment, fileName: `upload${type.extension}`, storedName, source: 'upload', bytes: 0, state: 'receiving' });
      await putImport(deps.store, record);
      const partial = join(inboxDir(deps.dataDir, environment, '.uploads'), storedName);
      const bytes = await upload.saveTo(partial);
      if (bytes === 0) {
        rmSync(partial, { force: true });
        throw E.bodyRequired();
      }
      renameSync(partial, join(inboxDir(deps.dataDir, environment, 'processing'), storedName));
      record = { ...record, state: 'queued', bytes };
      await putImport(deps.store, record);
      ex.closeConnection = false;
      deps.ingest.nudge();
      sendJson(ex, 202, { ...importSummary(record), report_file: null }, { Location: `/api/${environment}/imports/${importId}` });
    } catch (err) {
      upload.discard();
      if (record?.state === 'receiving') await removeImport(deps.store, record.environment, record.importId);
      throw err;
    }
  });

  server.route('get', '/api/:environment/imports', { status: STATUS_READ }, async (ex, req) => {
    const environment = await authorised(deps, req);
    const { limit = DEFAULT_LIST_LIMIT } = parseQuery(req.query, { limit: [1, MAX_LIST_LIMIT] });
    const imports = listImports(deps.store, environment, limit).map((r) => ({ ...importSummary(r), report_file: reportFile(r) }));
    sendJson(ex, 200, { imports });
  });

  server.route('get', '/api/:environment/imports/:import_id', { status: STATUS_READ }, async (ex, req) => {
    const environment = await authorised(deps, req);
    const importId = req.params[1] ?? '';
    const { rejected_after: after = 0, rejected_limit: limit = DEFAULT_REJECTED_LIMIT } = parseQuery(req.query, {
      rejected_after: [0, Number.MAX_SAFE_INTEGER],
      rejected_limit: [1, MAX_REJECTED_LIMIT],
    });
    const record = getImport(deps.store, environment, importId);
    if (!record || record.state === 'receiving') throw E.importNotFound(environment, importId);
    const rows = rejectedRows(deps.store, environment, importId, after, limit + 1);
    const more = rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    sendJson(ex, 200, {
      ...importSummary(record),
      report_file: reportFile(record),
      rejected_rows: page,
      next_rejected_after: more ? page[page.length - 1]!.row : null,
    });
  });
}
