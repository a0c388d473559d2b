/**
 * @module http/server
 * The uWS application: route registration with 405/404 answers, the request lifecycle (copy
 * what is needed from the stack-allocated HttpRequest, attach onAborted, start reading the body,
 * map thrown errors to problem responses), listening, and graceful shutdown bookkeeping.
 * Route modules own their behaviour; this module owns no endpoint semantics.
 */
import type { Logger } from 'pino';
import { E } from '../errors.ts';
import { readBody } from './read-body.ts';
import { sendProblem, type Exchange, type StatusMap } from './respond.ts';
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
}

export type Handler = (ex: Exchange, req: RequestInfo, body: Buffer | undefined) => void | Promise<void>;

export interface RouteOptions {
  status: StatusMap;
  /** Read the body (under the configured limit) before calling the handler. */
  readsBody?: boolean;
}

/** The listening port is taken by another process (or binding it is not permitted). */
export class PortUnavailableError extends Error {
  constructor(host: string, port: number) {
    super(`Cannot listen on ${host}:${port}: the port is already in use (or not permitted). Stop the other process or choose another port with AFFINITY_PORT.`);
    this.name = 'PortUnavailableError';
  }
}

const METHOD_NAMES: Record<Method, string> = { get: 'GET', put: 'PUT', post: 'POST', del: 'DELETE' };

function decodeParam(raw: string): string {
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
  readonly #allowed = new Map<string, Method[]>();
  #listenSocket: us_listen_socket | undefined;
  #inFlight = 0;
  #idle: (() => void) | undefined;

  constructor(options: { maxBodyBytes: number; log: Logger }) {
    this.#app = createApp();
    this.#log = options.log;
    this.#maxBodyBytes = options.maxBodyBytes;
  }

  /** Registers a handler; other methods on the same pattern answer 405 with `Allow`. */
  route(method: Method, pattern: string, options: RouteOptions, handler: Handler): this {
    const paramCount = pattern.split('/').filter((s) => s.startsWith(':')).length;
    this.#app[method](pattern, (res, req) => this.#run(res, req, paramCount, options, handler));
    let methods = this.#allowed.get(pattern);
    if (!methods) {
      methods = [];
      this.#allowed.set(pattern, methods);
      this.#app.any(pattern, (res, req) => {
        const ex: Exchange = { res, aborted: false, done: false };
        res.onAborted(() => (ex.aborted = true));
        const allow = methods!.map((m) => METHOD_NAMES[m]).join(', ');
        sendProblem(ex, E.methodNotAllowed(req.getMethod().toUpperCase(), req.getUrl(), allow), {}, this.#log);
      });
    }
    methods.push(method);
    return this;
  }

  #run(res: HttpResponse, req: HttpRequest, paramCount: number, options: RouteOptions, handler: Handler): void {
    const ex: Exchange = { res, aborted: false, done: false };
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
        method: req.getMethod().toUpperCase(),
        url: req.getUrl(),
        query: req.getQuery() ?? '',
        params,
        authorization: req.getHeader('authorization'),
        contentType: req.getHeader('content-type'),
        contentLength: req.getHeader('content-length'),
        contentEncoding: req.getHeader('content-encoding'),
      };
      if (options.readsBody) bodyPromise = readBody(ex, this.#maxBodyBytes, req.getHeader('content-length'));
    } catch (err) {
      sendProblem(ex, err, options.status, this.#log);
      this.#finish();
      return;
    }
    // A body read that fails before the handler awaits it must not become an unhandled rejection.
    bodyPromise?.catch(() => undefined);
    const run = async () => handler(ex, info, bodyPromise ? await bodyPromise : undefined);
    run()
      .catch((err: unknown) => sendProblem(ex, err, options.status, this.#log))
      .finally(() => this.#finish());
  }

  #finish(): void {
    this.#inFlight--;
    if (this.#inFlight === 0 && this.#idle) this.#idle();
  }

  /** Answers 404 for every path no route matched. Call after the last route. */
  fallback(): this {
    this.#app.any('/*', (res, req) => {
      const ex: Exchange = { res, aborted: false, done: false };
      res.onAborted(() => (ex.aborted = true));
      sendProblem(ex, E.notFound(req.getUrl()), {}, this.#log);
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
