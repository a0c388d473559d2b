/**
 * @module http/routes/ready
 * GET /ready, the readiness view for orchestrators (GET /health stays the liveness view): 200
 * when the store is open, the worker threads run, the ranking workers have built their engines
 * (the port opens before: events and catalog writes are taken while they load the catalog) and
 * every environment has a model serving (the model builder has loaded its state and reported
 * positions for each environment), else 503 with the reasons.
 */
import { sendJson } from '../respond.ts';
import type { HttpServer } from '../server.ts';

export interface ReadinessSources {
  environments: readonly string[];
  /** Throws when the store is closed or unreadable. */
  probeStore(): void;
  builder: { readonly running: boolean; readonly stats: { positions: Record<string, number> } | undefined };
  ingest: { readonly running: boolean };
  pool: { readonly threads: number; readonly engineBuilt: boolean };
  rankWorkers: number;
}

/** Why the service is not ready; empty when it is. */
export function notReadyReasons(s: ReadinessSources): string[] {
  const reasons: string[] = [];
  try {
    s.probeStore();
  } catch (err) {
    reasons.push(`storage is not open: ${(err as Error).message}`);
  }
  if (!s.builder.running) reasons.push('the model builder worker is not running');
  if (!s.ingest.running) reasons.push('the ingest worker is not running');
  if (s.pool.threads < s.rankWorkers) reasons.push(`${s.pool.threads} of ${s.rankWorkers} ranking workers run`);
  else if (!s.pool.engineBuilt) reasons.push('the ranking workers are loading the catalog');
  const positions = s.builder.stats?.positions;
  for (const environment of s.environments) {
    if (!positions || !(environment in positions)) reasons.push(`environment '${environment}' has no model serving yet (the model builder is loading)`);
  }
  return reasons;
}

export function registerReadyRoute(server: HttpServer, sources: ReadinessSources): void {
  server.route('get', '/ready', { status: {} }, (ex) => {
    const reasons = notReadyReasons(sources);
    if (reasons.length === 0) sendJson(ex, 200, { status: 'ready' });
    else sendJson(ex, 503, { status: 'not_ready', reasons });
  });
}
