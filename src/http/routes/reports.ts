/**
 * @module http/routes/reports
 * The reporting endpoints for an authenticated integrator, read-only, from the counters the
 * model builder and the request counter keep (store/report-keys.ts): no event is read here.
 * - GET /{env}/reports: counters per day or hour and per list_name, user_group, channel,
 *   page_type (requests, impressions, clicks, attributed add_to_cart, purchase, revenue), their
 *   totals with CTR, the intake per event type, coverage and latency percentiles.
 * - GET /{env}/reports/ab: the service group against each control group (domain/ab-comparison.ts).
 * - GET /{env}/reports/items: the most recommended and most clicked items.
 */
import type { Config } from '../../config/types.ts';
import { compareMeans, compareRates } from '../../domain/ab-comparison.ts';
import { latencyQuantile } from '../../domain/latency-buckets.ts';
import { readCounterRows, readCoverage, readLatency, readTopItems, type CounterRow } from '../../store/report-reader.ts';
import type { Store } from '../../store/open.ts';
import { environmentOf } from '../environment.ts';
import { authorize, type Authorizer } from '../auth.ts';
import { parseReportQuery } from '../report-query.ts';
import { sendJson, type StatusMap } from '../respond.ts';
import type { HttpServer } from '../server.ts';

const STATUS_REPORTS: StatusMap = { invalidRequest: 400, unauthorized: 401 };
/** The counters every total carries (0 when none was counted). */
const METRICS = ['requests', 'impressions', 'clicks', 'conversions', 'add_to_cart', 'purchase', 'revenue'] as const;

export interface ReportRoutesDeps {
  store: Store;
  auth: Authorizer;
  environments: Config['environments'];
  reports: Config['reports'];
}

const ratio = (a: number, b: number) => (b > 0 ? Math.round((a / b) * 1e6) / 1e6 : null);

/** Sums rows per dimension and value, with every metric present and CTR and conversion rate derived. */
function totalsOf(rows: CounterRow[]) {
  const totals = new Map<string, { dimension: string; value: string; metrics: Record<string, number | null> }>();
  for (const row of rows) {
    if (row.dimension === 'event_type') continue;
    const id = `${row.dimension}\u0000${row.value}`;
    let total = totals.get(id);
    if (!total) totals.set(id, (total = { dimension: row.dimension, value: row.value, metrics: Object.fromEntries(METRICS.map((m) => [m, 0])) }));
    for (const m of METRICS) total.metrics[m]! += row.metrics[m] ?? 0;
  }
  for (const { metrics } of totals.values()) {
    metrics.revenue = Math.round(metrics.revenue! * 100) / 100;
    metrics.ctr = ratio(metrics.clicks!, metrics.impressions!);
    metrics.conversion_rate = ratio(metrics.purchase!, metrics.clicks!);
  }
  return [...totals.values()];
}

export function registerReportRoutes(server: HttpServer, deps: ReportRoutesDeps): void {
  server.route('get', '/api/:environment/reports', { status: STATUS_REPORTS }, async (ex, req) => {
    const environment = req.params[0] ?? '';
    await authorize(deps.auth, req.authorization, environment);
    environmentOf(deps.environments, environment);
    const q = parseReportQuery(req.query, deps.reports, ['granularity', 'breakdown']);
    const days = readCounterRows(deps.store, environment, 'day', q.from, q.to);
    const rows = q.granularity === 'day' ? days : readCounterRows(deps.store, environment, 'hour', q.from, q.to);
    const intake: Record<string, number> = {};
    for (const row of days) if (row.dimension === 'event_type') intake[row.value] = (intake[row.value] ?? 0) + (row.metrics.events ?? 0);
    const latency = readLatency(deps.store, environment, q.from, q.to);
    const coverage = readCoverage(deps.store, environment, q.from, q.to);
    const shown = (row: CounterRow) => (q.breakdown ? row.dimension === q.breakdown : true);
    sendJson(ex, 200, {
      from: q.from,
      to: q.to,
      granularity: q.granularity,
      rows: rows.filter(shown).map((r) => ({
        day: r.period.slice(0, 10),
        ...(q.granularity === 'hour' ? { hour: `${r.period}:00:00Z` } : {}),
        dimension: r.dimension,
        value: r.value,
        metrics: r.metrics,
      })),
      totals: totalsOf(days).filter((t) => (q.breakdown ? t.dimension === q.breakdown : true)),
      intake,
      coverage: { recommended_items: coverage.recommended, catalog_items: coverage.catalog, share: ratio(coverage.recommended, coverage.catalog) },
      latency_ms: {
        requests: latency.reduce((a, b) => a + b, 0),
        p50: latencyQuantile(latency, 0.5),
        p90: latencyQuantile(latency, 0.9),
        p99: latencyQuantile(latency, 0.99),
      },
    });
  });

  server.route('get', '/api/:environment/reports/ab', { status: STATUS_REPORTS }, async (ex, req) => {
    const environment = req.params[0] ?? '';
    await authorize(deps.auth, req.authorization, environment);
    const env = environmentOf(deps.environments, environment);
    const q = parseReportQuery(req.query, deps.reports);
    const groups = new Map<string, Record<string, number>>();
    for (const row of readCounterRows(deps.store, environment, 'day', q.from, q.to, 'user_group')) {
      const sums = groups.get(row.value) ?? {};
      for (const [metric, n] of Object.entries(row.metrics)) sums[metric] = (sums[metric] ?? 0) + n;
      groups.set(row.value, sums);
    }
    const of = (group: string) => groups.get(group) ?? {};
    const service = of(env.serviceGroup);
    const units = (g: Record<string, number>) => ({ n: g.users ?? 0, sum: g.revenue ?? 0, sumSq: g.revenue_sq ?? 0 });
    sendJson(ex, 200, {
      from: q.from,
      to: q.to,
      service_group: env.serviceGroup,
      unit: 'user-day',
      confidence: 0.95,
      comparisons: Object.keys(env.controlGroups).map((group) => {
        const control = of(group);
        return {
          control_group: group,
          metrics: [
            { metric: 'ctr', ...compareRates(service.clicks ?? 0, service.impressions ?? 0, control.clicks ?? 0, control.impressions ?? 0) },
            { metric: 'conversion_rate', ...compareRates(service.converters ?? 0, service.users ?? 0, control.converters ?? 0, control.users ?? 0) },
            { metric: 'revenue_per_user', ...compareMeans(units(service), units(control)) },
          ],
        };
      }),
    });
  });

  server.route('get', '/api/:environment/reports/items', { status: STATUS_REPORTS }, async (ex, req) => {
    const environment = req.params[0] ?? '';
    await authorize(deps.auth, req.authorization, environment);
    environmentOf(deps.environments, environment);
    const q = parseReportQuery(req.query, deps.reports, ['limit']);
    sendJson(ex, 200, {
      from: q.from,
      to: q.to,
      recommended: readTopItems(deps.store, environment, 'recommended', q.from, q.to, q.limit),
      clicked: readTopItems(deps.store, environment, 'clicked', q.from, q.to, q.limit),
    });
  });
}
