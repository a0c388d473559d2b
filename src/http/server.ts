/**
 * @module http/server
 * The uWS application: route registration with 405/404 answers, the request lifecycle (copy
 * what is needed from the stack-allocated HttpRequest, attach onAborted, start reading the body,
 * map thrown errors to problem responses), listening, and graceful shutdown bookkeeping; per
 * request: the request id, the metrics observation, the sampled access log line, the CORS
 * decision and preflights, gzip/deflate request bodies and whether the answer may be gzipped.
 * Route modules own their behaviour; this module owns no endpoint semantics. HEAD on a GET route
 * runs the GET handler and is answered without its body (respond.ts), as RFC 9110 §9.3.2 asks.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { E } from '../domain/errors.ts';
import type { RequestObserver, ServiceMetrics } from '../metrics/service-metrics.ts';
import { decodeContentEncoding, readBody } from './read-body.ts';
import { sendEmpty, sendProblem, type Exchange, type StatusMap } from './respond.ts';
import {
  closeListenSocket,
  createApp,
  LISTEN_EXCLUSIVE_PORT,
  listenSocketPort,
  type HttpRequest,
  type HttpResponse,
  type TemplatedApp,
  type us_listen_socket,
} from './uws.ts';

export type Method = 'get' | 'put' | 'post' | 'del';

/** What a handler may know of the request: copied before any await. */
export interface RequestInfo {
  method: string;
  url: string;
  query: string;
  /** Path parameters in pattern order, percent-decoded. */
  params: string[];
  authorization: string;
  contentType: string;
  /** For routes that stream their body themselves (readsBody false): the declared length and coding. */
  contentLength: string;
  contentEncoding: string;
  /** Accept header, for routes that answer in more than one format. */
  accept: string;
  requestId: string;
}

export type Handler = (ex: Exchange, req: RequestInfo, body: Buffer | undefined) => void | Promise<void>;

export interface RouteOptions {
  status: StatusMap;
  /** Read the body (under the configured limit) before calling the handler. */
  readsBody?: boolean;
  /**
   * Browser origins allowed for the environment named by the first path parameter (CORS): such
   * a request's answer names its origin, and OPTIONS on the pattern answers preflights.
   */
  corsOrigins?: (environment: string) => readonly string[] | undefined;
}

export interface HttpServerOptions {
  maxBodyBytes: number;
  log: Logger;
  metrics?: ServiceMetrics;
  /** Share of requests logged as an `info` access line (0..1). */
  accessSampleRate?: number;
  /** Answers of at least this many bytes are gzipped for clients that accept gzip (undefined: never). */
  compressMinBytes?: number;
}

/** A client's X-Request-Id is kept when it is this short and plain; otherwise one is generated. */
const REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;
const PREFLIGHT_MAX_AGE_SEC = '600';
const ACCEPTS_GZIP = /\bgzip\b/i;

function requestIdOf(header: string): string {
  return REQUEST_ID.test(header) ? header : randomUUID();
}

function allowedOrigin(options: RouteOptions, environment: string, origin: string): string | undefined {
  if (origin === '' || !options.corsOrigins) return undefined;
  const allowed = options.corsOrigins(environment);
  if (!allowed) return undefined;
  if (allowed.includes(origin)) return origin;
  return allowed.includes('*') ? '*' : undefined;
}

/** The listening port is taken by another process (or binding it is not permitted). */
export class PortUnavailableError extends Error {
  constructor(host: string, port: number) {
    super(`Cannot listen on ${host}:${port}: the port is already in use (or not permitted). Stop the other process or choose another port with AFFINITY_PORT.`);
    this.name = 'PortUnavailableError';
  }
}

/** HTTP method names of the route methods (also the OpenAPI document's operation keys). */
export const METHOD_NAMES: Readonly<Record<Method, string>> = { get: 'GET', put: 'PUT', post: 'POST', del: 'DELETE' };

/** A registered route, as the OpenAPI document is built from it (openapi/document.ts). */
export interface RegisteredRoute {
  method: Method;
  pattern: string;
  status: StatusMap;
  cors: boolean;
  /** The server reads the body before the handler, with the errors that can raise. */
  readsBody?: boolean;
}

/** The `Allow` value of a pattern: HEAD is allowed wherever GET is. */
function allowHeader(methods: readonly Method[]): string {
  const names = methods.map((m) => METHOD_NAMES[m]);
  if (methods.includes('get')) names.push('HEAD');
  return names.join(', ');
}

/** uWS gives the method in lower case; the common ones upper-cased once, not per request. */
const UPPER_METHODS = new Map(['get', 'head', 'post', 'put', 'delete', 'options', 'patch'].map((m) => [m, m.toUpperCase()]));
function upperMethod(method: string): string {
  return UPPER_METHODS.get(method) ?? method.toUpperCase();
}

function decodeParam(raw: string): string {
  if (!raw.includes('%')) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    throw E.invalidRequest(`Path segment '${raw}' is not valid percent-encoding`);
  }
}

export class HttpServer {
  readonly #app: TemplatedApp;
  readonly #log: Logger;
  readonly #maxBodyBytes: number;
  readonly #metrics: ServiceMetrics | undefined;
  readonly #accessSampleRate: number;
  readonly #compressMinBytes: number | undefined;
  readonly #allowed = new Map<string, Method[]>();
  readonly #cors = new Map<string, NonNullable<RouteOptions['corsOrigins']>>();
  /** Route patterns as registered, for the OpenAPI check and /metrics labels. */
  readonly routes: RegisteredRoute[] = [];
  #listenSocket: us_listen_socket | undefined;
  #inFlight = 0;
  #idle: (() => void) | undefined;

  constructor(options: HttpServerOptions) {
    this.#app = createApp();
    this.#log = options.log;
    this.#maxBodyBytes = options.maxBodyBytes;
    this.#metrics = options.metrics;
    this.#accessSampleRate = options.accessSampleRate ?? 0;
    this.#compressMinBytes = options.compressMinBytes;
  }

  /** Applies a CORS policy to the routes of these patterns registered afterwards. */
  cors(patterns: readonly string[], corsOrigins: NonNullable<RouteOptions['corsOrigins']>): this {
    for (const pattern of patterns) this.#cors.set(pattern, corsOrigins);
    return this;
  }

  /** Registers a handler; other methods on the same pattern answer 405 with `Allow`. */
  route(method: Method, pattern: string, routeOptions: RouteOptions, handler: Handler): this {
    const corsOrigins = this.#cors.get(pattern);
    const options = corsOrigins ? { ...routeOptions, corsOrigins } : routeOptions;
    const paramCount = pattern.split('/').filter((s) => s.startsWith(':')).length;
    const observe = this.#metrics?.requestObserver(pattern, METHOD_NAMES[method]);
    this.#app[method](pattern, (res, req) => this.#run(res, req, paramCount, options, handler, false, observe));
    if (method === 'get') this.#app.head(pattern, (res, req) => this.#run(res, req, paramCount, options, handler, true, observe));
    this.routes.push({ method, pattern, status: routeOptions.status, cors: corsOrigins !== undefined, readsBody: routeOptions.readsBody === true });
    let methods = this.#allowed.get(pattern);
    if (!methods) {
      methods = [];
      this.#allowed.set(pattern, methods);
      const listed = methods;
      if (options.corsOrigins) this.#app.options(pattern, (res, req) => this.#preflight(res, req, options, listed));
      const observeOther = this.#metrics?.requestObserver(pattern, 'other');
      this.#app.any(pattern, (res, req) => {
        const method = req.getMethod().toUpperCase();
        const ex: Exchange = { res, aborted: false, done: false, head: method === 'HEAD', requestId: requestIdOf(req.getHeader('x-request-id')) };
        res.onAborted(() => (ex.aborted = true));
        sendProblem(ex, E.methodNotAllowed(method, req.getUrl(), allowHeader(listed)), {}, this.#log);
        observeOther?.(ex.status ?? 0, 0);
      });
    }
    methods.push(method);
    return this;
  }

  /**
   * CORS preflight: 204 naming the origin, the pattern's methods and the requested headers when
   * the environment allows the origin; 204 without any CORS header otherwise, which the browser
   * reads as a refusal.
   */
  #preflight(res: HttpResponse, req: HttpRequest, options: RouteOptions, methods: readonly Method[]): void {
    let environment = '';
    try {
      environment = decodeParam(req.getParameter(0) ?? '');
    } catch {
      // Bad percent-encoding names no environment: no CORS headers.
    }
    const origin = allowedOrigin(options, environment, req.getHeader('origin'));
    const requestedHeaders = req.getHeader('access-control-request-headers');
    const ex: Exchange = { res, aborted: false, done: false, requestId: requestIdOf(req.getHeader('x-request-id')) };
    if (!origin) {
      sendEmpty(ex, 204);
      return;
    }
    ex.corsOrigin = origin;
    sendEmpty(ex, 204, {
      'Access-Control-Allow-Methods': methods.map((m) => METHOD_NAMES[m]).join(', '),
      'Access-Control-Allow-Headers': requestedHeaders === '' ? 'Content-Type, Content-Encoding, Authorization, X-Request-Id' : requestedHeaders,
      'Access-Control-Max-Age': PREFLIGHT_MAX_AGE_SEC,
    });
  }

  #run(res: HttpResponse, req: HttpRequest, paramCount: number, options: RouteOptions, handler: Handler, head: boolean, observe?: RequestObserver): void {
    const startedAt = performance.now();
    const ex: Exchange = { res, aborted: false, done: false, head, requestId: requestIdOf(req.getHeader('x-request-id')) };
    if (this.#compressMinBytes !== undefined && ACCEPTS_GZIP.test(req.getHeader('accept-encoding'))) ex.gzipMinBytes = this.#compressMinBytes;
    res.onAborted(() => {
      ex.aborted = true;
      ex.onAbort?.();
    });
    this.#inFlight++;
    let bodyPromise: Promise<Buffer> | undefined;
    let info: RequestInfo;
    try {
      const params: string[] = [];
      for (let i = 0; i < paramCount; i++) params.push(decodeParam(req.getParameter(i)));
      info = {
        method: upperMethod(req.getMethod()),
        url: req.getUrl(),
        query: req.getQuery() ?? '',
        params,
        authorization: req.getHeader('authorization'),
        contentType: req.getHeader('content-type'),
        contentLength: req.getHeader('content-length'),
        contentEncoding: req.getHeader('content-encoding'),
        accept: req.getHeader('accept'),
        requestId: ex.requestId!,
      };
      if (options.corsOrigins) ex.corsOrigin = allowedOrigin(options, params[0] ?? '', req.getHeader('origin'));
      if (options.readsBody) {
        const encoding = info.contentEncoding;
        const maxBytes = this.#maxBodyBytes;
        // An unknown coding is refused (415) before the body is read.
        bodyPromise = readBody(ex, maxBytes, info.contentLength, encoding);
        // The limit applies again to the decoded size: a small gzip bomb is refused with 413.
        if (encoding !== '') bodyPromise = bodyPromise.then((raw) => decodeContentEncoding(raw, encoding, maxBytes));
      }
    } catch (err) {
      sendProblem(ex, err, options.status, this.#log);
      this.#finish(ex, startedAt, observe);
      return;
    }
    // Two promises per request at most (the body, the handler's): a chain of async wrappers,
    // catch and finally cost the main thread more than routing did.
    const finish = () => this.#finish(ex, startedAt, observe, info);
    const fail = (err: unknown) => {
      sendProblem(ex, err, options.status, this.#log);
      finish();
    };
    if (bodyPromise) {
      // Attached at once: a body read that fails early is handled, not an unhandled rejection.
      bodyPromise.then((body) => handler(ex, info, body)).then(finish, fail);
      return;
    }
    let outcome: void | Promise<void>;
    try {
      outcome = handler(ex, info, undefined);
    } catch (err) {
      fail(err);
      return;
    }
    if (outcome) outcome.then(finish, fail);
    else finish();
  }

  #finish(ex: Exchange, startedAt: number, observe: RequestObserver | undefined, info?: RequestInfo): void {
    this.#inFlight--;
    if (this.#inFlight === 0 && this.#idle) this.#idle();
    const ms = performance.now() - startedAt;
    observe?.(ex.status ?? 0, ms / 1000);
    // Sampled (0 by default): a line per request would cost more than the request on the hot path.
    if (this.#accessSampleRate > 0 && Math.random() < this.#accessSampleRate) {
      this.#log.info({ requestId: ex.requestId, method: info?.method, url: info?.url, status: ex.status ?? 0, ms: Math.round(ms * 1000) / 1000 }, 'request');
    }
  }

  /** Answers 404 for every path no route matched. Call after the last route. */
  fallback(): this {
    const observe = this.#metrics?.requestObserver('(unmatched)', 'other');
    this.#app.any('/*', (res, req) => {
      const ex: Exchange = { res, aborted: false, done: false, head: req.getMethod() === 'head', requestId: requestIdOf(req.getHeader('x-request-id')) };
      res.onAborted(() => (ex.aborted = true));
      sendProblem(ex, E.notFound(req.getUrl()), {}, this.#log);
      observe?.(ex.status ?? 0, 0);
    });
    return this;
  }

  /**
   * Starts listening; resolves with the bound port (useful with port 0). Rejects with
   * PortUnavailableError when the port is taken (or not permitted); with `reusePort` the port is
   * shared with other processes that also ask for it.
   */
  listen(host: string, port: number, reusePort = false): Promise<number> {
    return new Promise((resolve, reject) => {
      const onListen = (socket: us_listen_socket | false) => {
        if (!socket) {
          reject(new PortUnavailableError(host, port));
          return;
        }
        this.#listenSocket = socket;
        resolve(listenSocketPort(socket));
      };
      // The typings lack the (host, port, options, cb) form the binding accepts.
      const listen = this.#app.listen as unknown as (h: string, p: number, o: number, cb: typeof onListen) => void;
      if (reusePort) this.#app.listen(host, port, onListen);
      else listen.call(this.#app, host, port, LISTEN_EXCLUSIVE_PORT, onListen);
    });
  }

  /** Stops accepting connections, then waits for in-flight requests (at most `timeoutMs`). */
  async drain(timeoutMs: number): Promise<boolean> {
    if (this.#listenSocket) closeListenSocket(this.#listenSocket);
    this.#listenSocket = undefined;
    if (this.#inFlight === 0) return true;
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.#idle = () => {
        clearTimeout(timer);
        resolve(true);
      };
    });
  }

  /** Closes every remaining connection (keep-alive clients included). */
  close(): void {
    // Present at run time in this build, missing from its type declarations.
    (this.#app as TemplatedApp & { close(): void }).close();
  }
}
