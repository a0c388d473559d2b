/**
 * @module http/routes/reports
 * GET /{environment}/reports?from=YYYY-MM-DD&to=YYYY-MM-DD: the model builder's reporting
 * counters (impressions, clicks, conversions, add_to_cart, purchase, revenue per day and per
 * list_name, user_group and channel) for an authenticated integrator. Read-only.
 */
import type { Config } from '../../config/types.ts';
import { E } from '../../errors.ts';
import type { Store } from '../../store/open.ts';
import { environmentOf } from '../environment.ts';
import { authorize, type Authorizer } from '../auth.ts';
import { sendJson, type StatusMap } from '../respond.ts';
import type { HttpServer } from '../server.ts';

const STATUS_REPORTS: StatusMap = { invalidRequest: 400, unauthorized: 401 };
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const MAX_DAYS = 366;

export interface ReportRoutesDeps {
  store: Store;
  auth: Authorizer;
  environments: Config['environments'];
}

interface ReportRow {
  day: string;
  dimension: string;
  value: string;
  metrics: Record<string, number>;
}

export function registerReportRoutes(server: HttpServer, deps: ReportRoutesDeps): void {
  server.route('get', '/api/:environment/reports', { status: STATUS_REPORTS }, async (ex, req) => {
    const environment = req.params[0] ?? '';
    await authorize(deps.auth, req.authorization, environment);
    environmentOf(deps.environments, environment);
    const q = new URLSearchParams(req.query);
    const today = new Date().toISOString().slice(0, 10);
    const to = q.get('to') ?? today;
    const from = q.get('from') ?? new Date(Date.parse(to) - 6 * 86_400_000).toISOString().slice(0, 10);
    const errors = [];
    for (const [name, value] of [['from', from], ['to', to]] as const) {
      if (!DAY.test(value) || Number.isNaN(Date.parse(value))) errors.push({ path: name, message: 'must be a date YYYY-MM-DD' });
    }
    if (errors.length === 0 && (from > to || Date.parse(to) - Date.parse(from) > MAX_DAYS * 86_400_000)) {
      errors.push({ path: 'from', message: `must be on or before 'to', at most ${MAX_DAYS} days earlier` });
    }
    if (errors.length > 0) throw E.invalidRequest(errors.map((e) => `${e.path} ${e.message}`).join('; '), errors);

    const rows = new Map<string, ReportRow>();
    const range = deps.store.modelState.getRange({
      start: [environment, 'rep', from],
      end: [environment, 'rep', `${to}\uffff`],
    });
    for (const { key, value } of range) {
      const [, , day, dimension, dimValue, metric] = key as [string, string, string, string, string, string];
      const id = `${day}\u0000${dimension}\u0000${dimValue}`;
      let row = rows.get(id);
      if (!row) {
        row = { day, dimension, value: dimValue, metrics: {} };
        rows.set(id, row);
      }
      row.metrics[metric] = value as number;
    }
    sendJson(ex, 200, { from, to, rows: [...rows.values()] });
  });
}
