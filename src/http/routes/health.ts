/**
 * @module http/routes/health
 * Liveness for load balancers and the README's first check: 200 once requests are served, with
 * the model builder's progress (events applied, acceptance-to-model lag) for operators.
 */
import type { ModelBuilder } from '../../model/builder.ts';
import { sendJson } from '../respond.ts';
import type { HttpServer } from '../server.ts';

export function registerHealthRoute(server: HttpServer, builder: ModelBuilder): void {
  server.route('get', '/health', { status: {} }, (ex) => {
    const stats = builder.stats;
    sendJson(ex, 200, {
      status: 'ok',
      model_builder: stats
        ? {
            events_applied: stats.applied,
            lag_ms: { p50: stats.lag.p50Ms, p99: stats.lag.p99Ms, max: stats.lag.maxMs },
            positions: stats.positions,
            skipped: stats.skipped,
          }
        : null,
    });
  });
}
