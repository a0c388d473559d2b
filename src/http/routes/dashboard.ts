/**
 * @module http/routes/dashboard
 * GET /dashboard (the reporting dashboard page) and its assets, as `npm run build` bundled them
 * into dist/dashboard (scripts/build-web.ts; read from there whether the service runs from
 * src/ or dist/). The page signs in and calls the API itself, so these routes need no token.
 * Before a build the page answers 404 saying so.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { E } from '../../domain/errors.ts';
import { sendBody, type Exchange } from '../respond.ts';
import type { HttpServer } from '../server.ts';

/** src/http/routes or dist/http/routes → the package root. */
const BUILT = join(import.meta.dirname, '..', '..', '..', 'dist', 'dashboard');
const PAGE = { name: 'index.html', type: 'text/html; charset=utf-8' };
/** What /dashboard/:file serves: the page itself only at /dashboard, so relative links always resolve the same way. */
const ASSETS: Record<string, string> = {
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
};
/** The page loads only its own script and styles and calls only this origin. */
const HEADERS = { 'Content-Security-Policy': "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'", 'X-Content-Type-Options': 'nosniff' };

export function registerDashboardRoutes(server: HttpServer): void {
  const built = existsSync(join(BUILT, PAGE.name));
  const load = (entries: Array<[string, string]>) =>
    new Map(entries.filter(([name]) => existsSync(join(BUILT, name))).map(([name, type]) => [name, { type, bytes: readFileSync(join(BUILT, name)) }]));
  const page = load([[PAGE.name, PAGE.type]]);
  const assets = load(Object.entries(ASSETS));
  const send = (ex: Exchange, file: { type: string; bytes: Buffer } | undefined, url: string) => {
    if (!file) throw E.notFound(built ? url : `${url} (the dashboard is built by \`npm run build\`)`);
    sendBody(ex, 200, file.type, file.bytes, { ...HEADERS, 'Cache-Control': 'no-cache' });
  };
  server.route('get', '/dashboard', { status: { notFound: 404 } }, (ex, req) => send(ex, page.get(PAGE.name), req.url));
  server.route('get', '/dashboard/:file', { status: { notFound: 404 } }, (ex, req) => send(ex, assets.get(req.params[0] ?? ''), req.url));
}
