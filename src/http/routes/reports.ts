/**
 * @module http/routes/reports
 * GET /{environment}/reports?from=YYYY-MM-DD&to=YYYY-MM-DD: the model builder's reporting
 * counters (impressions, clicks, conversions, add_to_cart, purchase, revenue per day and per
 * list_name, user_group and channel) for an authenticated integrator. Read-only.
 */
import type { Config } from '../../config/types.ts';
import { E, type FieldError } from '../../errors.ts';
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

/** A calendar day `YYYY-MM-DD` that exists (2024-02-30 does not), as its UTC midnight in ms; NaN otherwise. */
function dayMs(value: string): number {
  if (!DAY.test(value)) return NaN;
  const ms = Date.parse(value);
  // Date.parse rolls 2024-02-30 over to March 1st: only a day that prints back unchanged is real.
  return Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== value ? NaN : ms;
}

/**
 * The report range of a query: `to` defaults to today, `from` to six days before `to`. Every
 * parameter is checked before it is used (an unchecked `to` once reached Date#toISOString and
 * threw a RangeError, a 500); unknown parameters are refused.
 */
function parseRange(query: string): { from: string; to: string } {
  const q = new URLSearchParams(query);
  const errors: FieldError[] = [];
  for (const key of new Set(q.keys())) {
    if (key !== 'from' && key !== 'to') errors.push({ path: key, message: 'is not a query parameter of this endpoint' });
    else if (q.getAll(key).length > 1) errors.push({ path: key, message: 'must be given once' });
  }
  const rawTo = q.get('to');
  const toMs = rawTo === null ? Date.parse(new Date().toISOString().slice(0, 10)) : dayMs(rawTo);
  if (Number.isNaN(toMs)) errors.push({ path: 'to', message: 'must be a date YYYY-MM-DD' });
  const rawFrom = q.get('from');
  const fromMs = rawFrom === null ? toMs - 6 * 86_400_000 : dayMs(rawFrom);
  if (rawFrom !== null && Number.isNaN(fromMs)) errors.push({ path: 'from', message: 'must be a date YYYY-MM-DD' });
  if (errors.length === 0 && (fromMs > toMs || toMs - fromMs > MAX_DAYS * 86_400_000)) {
    errors.push({ path: 'from', message: `must be on or before 'to', at most ${MAX_DAYS} days earlier` });
  }
  if (errors.length > 0) throw E.invalidRequest(errors.map((e) => `${e.path} ${e.message}`).join('; '), errors);
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  return { from: day(fromMs), to: day(toMs) };
}

export function registerReportRoutes(server: HttpServer, deps: ReportRoutesDeps): void {
  server.route('get', '/api/:environment/reports', { status: STATUS_REPORTS }, async (ex, req) => {
    const environment = req.params[0] ?? '';
    await authorize(deps.auth, req.authorization, environment);
    environmentOf(deps.environments, environment);
    const { from, to } = parseRange(req.query);

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
