// Preloaded into every test process by scripts/test.ts (`--import`): every response a test gets
// through fetch from an Affinity server is checked against that server's own OpenAPI document
// (/api/openapi.json) with ResponseChecker — the operation, the documented status, the media
// type and the body schema. A mismatch rejects the fetch, so the test that made the request
// fails with the method, path, status and schema error. Responses read through node:http or raw
// sockets (protocol-edge tests) are not seen here.
import { ResponseChecker, type OpenApiDocument } from './openapi.ts';

/** Paths served by the service's documented operations; other hosts' paths (feed servers) are left alone. */
const CHECKED_PATH = /^\/(api\/|health$|ready$|metrics$|\.well-known\/)/;
/** Bodies above this are not read twice (their status and media type are still checked). */
const MAX_BODY_BYTES = 1 << 20;

interface Route {
  path: string;
  pattern: RegExp;
  /** Literal segments: the most specific template wins, as uWS prefers static segments. */
  literals: number;
}

interface Conformance {
  checker: ResponseChecker;
  routes: Route[];
}

const originalFetch = globalThis.fetch;
/** Per origin: the document's checker (a port may be reused by another server; the document is the same). */
const byOrigin = new Map<string, Promise<Conformance | undefined>>();
/** Per document text: compiling the schemas once per document keeps the suite's time unchanged. */
const byDocument = new Map<string, Conformance>();

function conformanceOf(text: string): Conformance {
  let found = byDocument.get(text);
  if (!found) {
    const doc = JSON.parse(text) as OpenApiDocument;
    const routes = Object.keys(doc.paths).map((path) => {
      const segments = path.split('/');
      const pattern = new RegExp(`^${segments.map((s) => (/^\{\w+\}$/.test(s) ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/')}$`);
      return { path, pattern, literals: segments.filter((s) => !s.startsWith('{')).length };
    });
    routes.sort((a, b) => b.literals - a.literals);
    found = { checker: new ResponseChecker(doc), routes };
    byDocument.set(text, found);
  }
  return found;
}

async function documentOf(origin: string): Promise<Conformance | undefined> {
  let pending = byOrigin.get(origin);
  if (!pending) {
    pending = (async () => {
      const res = await originalFetch(`${origin}/api/openapi.json`);
      const text = await res.text();
      // Not an Affinity server (or not one that serves the document): nothing to check against.
      if (res.status !== 200 || !text.includes('"openapi"')) return undefined;
      return conformanceOf(text);
    })();
    byOrigin.set(origin, pending);
    // A server that stopped before its document was read: ask again next time, do not cache "none".
    pending.catch(() => byOrigin.delete(origin));
  }
  return pending.catch(() => undefined);
}

async function check(method: string, url: URL, res: Response): Promise<void> {
  const conformance = await documentOf(url.origin);
  if (!conformance) return;
  // A path no operation matches is answered by the router's 404 fallback (or a test's deliberate
  // nonsense path): there is no operation to check it against, so it is skipped.
  const route = conformance.routes.find((r) => r.pattern.test(url.pathname));
  if (!route) return;
  const operations = conformance.checker.doc.paths[route.path]!;
  // HEAD is answered as GET without the body; other methods on a documented path are the router's
  // 405 (and OPTIONS the CORS preflight), which belong to no operation.
  const asMethod = method === 'HEAD' ? 'GET' : method;
  if (!operations[asMethod.toLowerCase()]) return;
  const length = Number(res.headers.get('content-length') ?? '0');
  let text = '';
  if (method !== 'HEAD' && length <= MAX_BODY_BYTES) {
    try {
      text = await res.clone().text();
    } catch {
      return; // the request was aborted while its body was read: nothing whole to check
    }
  }
  if (method === 'HEAD' || length > MAX_BODY_BYTES) {
    // Status only: the body is absent (HEAD) or not worth reading twice.
    if (!operations[asMethod.toLowerCase()]!.responses[String(res.status)]) {
      throw new Error(`OpenAPI conformance: ${method} ${url.pathname} answered ${res.status}, which ${asMethod} ${route.path} does not document`);
    }
    return;
  }
  try {
    conformance.checker.check(asMethod, route.path, res, text);
  } catch (err) {
    throw new Error(`OpenAPI conformance: ${method} ${url.pathname}${url.search} answered ${res.status}, against ${asMethod} ${route.path}: ${(err as Error).message}`);
  }
}

globalThis.fetch = async function conformingFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const res = await originalFetch(input, init);
  const url = new URL(input instanceof Request ? input.url : String(input));
  if (!CHECKED_PATH.test(url.pathname)) return res;
  const signal = init?.signal ?? (input instanceof Request ? input.signal : undefined);
  if (signal?.aborted) return res;
  const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
  await check(method, url, res);
  return res;
};
