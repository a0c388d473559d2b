/**
 * @module http/routes/metrics
 * GET /metrics: Prometheus text format (metrics/service-metrics.ts). No token: like /health it is
 * meant for the operator's network; a proxy in front (deploy/Caddyfile) keeps it internal.
 */
import type { ServiceMetrics } from '../../metrics/service-metrics.ts';
import { sendBody } from '../respond.ts';
import type { HttpServer } from '../server.ts';

export function registerMetricsRoute(server: HttpServer, metrics: ServiceMetrics): void {
  server.route('get', '/metrics', { status: {} }, async (ex) => {
    sendBody(ex, 200, metrics.contentType, await metrics.text());
  });
}
