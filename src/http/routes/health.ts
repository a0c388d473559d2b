/**
 * @module http/routes/health
 * Liveness for load balancers and the README's first check: 200 once requests are served.
 */
import { sendJson } from '../respond.ts';
import type { HttpServer } from '../server.ts';

export function registerHealthRoute(server: HttpServer): void {
  server.route('get', '/health', { status: {} }, (ex) => sendJson(ex, 200, { status: 'ok' }));
}
