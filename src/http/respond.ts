/**
 * @module http/respond
 * Every byte the service writes goes through here: JSON, empty and RFC 9457 problem responses,
 * corked, never after the client aborted. The status of an error is the route's STATUS map
 * entry for its kind, else the kind's default. Every response carries the request id; CORS
 * headers when the route allowed the request's origin; a gzip body when the client accepts it
 * and the body is at least `gzipMinBytes`.
 */
import { STATUS_CODES } from 'node:http';
import { constants, gzipSync } from 'node:zlib';
import type { Logger } from 'pino';
import { AppError, E } from '../domain/errors.ts';
import type { HttpResponse } from './uws.ts';

/** Per-route overrides of error statuses, copied from the route's SPEC.md table. */
export type StatusMap = Readonly<Partial<Record<string, number>>>;

/** A response in flight: the uWS handle plus the abort flag uWS requires us to track. */
export interface Exchange {
  res: HttpResponse;
  aborted: boolean;
  /** Set once a response has been written, so a late error is not written twice. */
  done: boolean;
  /** A HEAD request: the response carries the headers of its GET answer and no body. */
  head?: boolean;
  /** Close the connection after the response: set while a streamed body may be unread (uploads). */
  closeConnection?: boolean;
  /** Called once when the client aborts (uWS takes one abort handler: the server's, which calls this). */
  onAbort?: () => void;
  /** X-Request-Id of the request (taken from the client or generated), echoed in the response. */
  requestId?: string;
  /** The status written, for metrics and the access log. */
  status?: number;
  /** The request's Origin when the route's CORS policy allows it: the response names it. */
  corsOrigin?: string;
  /** Compress a body of at least this many bytes (the client sent `Accept-Encoding: gzip`). */
  gzipMinBytes?: number;
}

/** Browsers let scripts read only these response headers beyond the simple ones. */
const CORS_EXPOSED = 'X-Request-Id, Location, Retry-After';

const STATUS_LINES = new Map<number, string>();
function statusLine(status: number): string {
  let line = STATUS_LINES.get(status);
  if (!line) {
    line = `${status} ${STATUS_CODES[status] ?? ''}`.trimEnd();
    STATUS_LINES.set(status, line);
  }
  return line;
}

/**
 * Seconds an idle keep-alive connection may be reused, told to clients in every response. uWS
 * closes idle connections after 10 s (HTTP_IDLE_TIMEOUT_S, not configurable); a client that
 * knows to stop reusing a connection well before then does not send a request into a socket the
 * server is closing (the audit saw 914 such resets without this hint).
 */
const KEEP_ALIVE_TIMEOUT_SEC = 5;
const KEEP_ALIVE = `timeout=${KEEP_ALIVE_TIMEOUT_SEC}`;

/**
 * `closeConnection` asks the client to close (`Connection: close`) once it has this response
 * while uWS reads and drops the rest of the request body: closing the socket at once with
 * unread bytes in it makes the kernel send a reset, and the client then loses the response (the
 * audit saw 49 resets in 710 oversized bodies). `ex.closeConnection` (a streamed upload that
 * failed part-way) still closes at once.
 */
function write(
  ex: Exchange,
  status: number,
  contentType: string | undefined,
  body: string | Uint8Array | undefined,
  headers?: Record<string, string>,
  closeConnection = false,
): void {
  if (ex.aborted || ex.done) return;
  ex.done = true;
  ex.status = status;
  let payload: string | Uint8Array | undefined = body;
  let gzipped = false;
  // Compressing costs main-thread time; below the threshold the bytes saved are not worth it.
  if (body !== undefined && ex.gzipMinBytes !== undefined && body.length >= ex.gzipMinBytes) {
    // Fastest level: this runs on the main thread, and the bytes saved beyond it are few.
    payload = gzipSync(body, { level: constants.Z_BEST_SPEED });
    gzipped = true;
  }
  ex.res.cork(() => {
    ex.res.writeStatus(statusLine(status));
    if (contentType) ex.res.writeHeader('Content-Type', contentType);
    if (ex.requestId) ex.res.writeHeader('X-Request-Id', ex.requestId);
    if (ex.corsOrigin) {
      ex.res.writeHeader('Access-Control-Allow-Origin', ex.corsOrigin);
      ex.res.writeHeader('Access-Control-Expose-Headers', CORS_EXPOSED);
      ex.res.writeHeader('Vary', 'Origin');
    }
    if (gzipped) {
      ex.res.writeHeader('Content-Encoding', 'gzip');
      ex.res.writeHeader('Vary', 'Accept-Encoding');
    }
    if (headers) for (const name in headers) ex.res.writeHeader(name, headers[name]!);
    const hardClose = ex.closeConnection === true;
    if (!hardClose) ex.res.writeHeader(closeConnection ? 'Connection' : 'Keep-Alive', closeConnection ? 'close' : KEEP_ALIVE);
    if (ex.head) {
      // uWS's endWithoutBody(length) would wait for that many bytes, and any argument at all is
      // taken as a length: the length is written by hand and no argument is passed (HEAD requests
      // carry no body, so there is nothing unread to close the connection over).
      ex.res.writeHeader('Content-Length', String(payload === undefined ? 0 : typeof payload === 'string' ? Buffer.byteLength(payload) : payload.byteLength));
      ex.res.endWithoutBody();
    } else {
      ex.res.end(payload, hardClose);
    }
  });
}

export function sendJson(ex: Exchange, status: number, body: unknown, headers?: Record<string, string>): void {
  write(ex, status, 'application/json', JSON.stringify(body), headers);
}

/** A body already encoded (Prometheus text, HTML, protobuf bytes), with its media type. */
export function sendBody(ex: Exchange, status: number, contentType: string, body: string | Uint8Array, headers?: Record<string, string>): void {
  write(ex, status, contentType, body, headers);
}

/** A response with no content (SPEC.md's "200 ... (no content)"). */
export function sendEmpty(ex: Exchange, status: number, headers?: Record<string, string>): void {
  write(ex, status, undefined, undefined, headers);
}

/** Writes `err` as problem details; unknown errors become a logged 500. */
export function sendProblem(ex: Exchange, err: unknown, statusMap: StatusMap, log: Logger): void {
  const appError = err instanceof AppError ? err : E.internal(err);
  const status = statusMap[appError.kind] ?? appError.status;
  // Shedding load (503) is expected under overload, and a log line per shed request would add to it.
  if (status >= 500 && status !== 503) log.error({ kind: appError.kind, requestId: ex.requestId, err: appError.cause ?? appError }, appError.detail);
  else log.debug({ kind: appError.kind, status, requestId: ex.requestId }, appError.detail);
  const body: Record<string, unknown> = {
    type: `urn:affinity:problem:${appError.kind.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`,
    title: appError.title,
    status,
    detail: appError.detail,
  };
  if (appError.errors) body.errors = appError.errors;
  // An RFC 9457 extension member: what a client quotes to an operator searching the logs.
  if (ex.requestId) body.request_id = ex.requestId;
  // An oversized body is not read to the end: close so the rest of it is not parsed as a request.
  write(ex, status, 'application/problem+json', JSON.stringify(body), appError.headers, status === 413);
}

/** RFC 6749 §5.2 error body for the token endpoint (OAuth clients expect it, not problem details). */
export function sendOAuthError(
  ex: Exchange,
  status: number,
  error: string,
  description: string,
  headers?: Record<string, string>,
): void {
  write(
    ex,
    status,
    'application/json',
    JSON.stringify({ error, error_description: description }),
    { 'Cache-Control': 'no-store', ...headers },
  );
}
