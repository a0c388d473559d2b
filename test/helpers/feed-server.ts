// A local HTTP server for feed tests: serves every file of ../shared/datasets/feeds/ under
// /files/<path> (with the Content-Type a feedparser test names in its `Header:` comment), and
// routes a test programs (status, headers, body, delay) under any other path. Records every
// request so a test can check conditional GET headers and retries.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join, relative } from 'node:path';

export const FEEDS_DIR = join(import.meta.dirname, '..', '..', '..', 'shared', 'datasets', 'feeds');

/** Every feed document of the corpus (not licences or the manifest), as paths relative to FEEDS_DIR. */
export function corpusFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.(xml|rss|atom)$/.test(name)) out.push(relative(FEEDS_DIR, path));
    }
  };
  walk(FEEDS_DIR);
  return out;
}

/** The Content-Type a feedparser test file asks to be served with, if any. */
export function declaredContentType(bytes: Buffer): string | undefined {
  const head = bytes.subarray(0, 1024).toString('latin1');
  return /^Header:\s*Content-type:\s*(.+)$/im.exec(head)?.[1]?.trim();
}

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Wait this long before answering. */
  delayMs?: number;
}

export type Route = (req: IncomingMessage, count: number) => Reply;

export interface FeedServer {
  url: string;
  /** Sets what a path answers; `count` is how many requests the path has had, this one included. */
  route(path: string, route: Route | Reply): void;
  /** Requests received for a path, oldest first. */
  requests(path: string): IncomingMessage[];
  close(): Promise<void>;
}

export async function startFeedServer(): Promise<FeedServer> {
  const routes = new Map<string, Route>();
  const seen = new Map<string, IncomingMessage[]>();
  const server: Server = createServer((req, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const list = seen.get(path) ?? [];
    list.push(req);
    seen.set(path, list);
    let reply: Reply;
    if (path.startsWith('/files/')) {
      try {
        const bytes = readFileSync(join(FEEDS_DIR, decodeURIComponent(path.slice('/files/'.length))));
        reply = { body: bytes, headers: { 'Content-Type': declaredContentType(bytes) ?? 'application/xml' } };
      } catch {
        reply = { status: 404, body: 'no such file' };
      }
    } else {
      const route = routes.get(path);
      reply = route ? route(req, list.length) : { status: 404, body: 'no route' };
    }
    const send = () => {
      if (res.destroyed) return;
      res.writeHead(reply.status ?? 200, reply.headers ?? {});
      res.end(reply.body ?? '');
    };
    if (reply.delayMs) setTimeout(send, reply.delayMs);
    else send();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    route(path, route) {
      routes.set(path, typeof route === 'function' ? route : () => route);
    },
    requests: (path) => seen.get(path) ?? [],
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
