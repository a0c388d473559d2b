/**
 * @module http/report-query
 * The query of the report endpoints: `from` and `to` (days, YYYY-MM-DD, inclusive; `to`
 * defaults to today, `from` to six days before `to`), and per endpoint `granularity` (day,
 * hour), `breakdown` (a dimension) and `limit`. Every parameter is checked before it is used
 * (an unchecked `to` once reached Date#toISOString and threw a RangeError, a 500); unknown
 * parameters are refused; a reversed range or one longer than the configured maximum is a 400.
 */
import type { ReportsConfig } from '../config/types.ts';
import { E, type FieldError } from '../domain/errors.ts';
import { fieldErrorsText } from '../domain/field-errors.ts';

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const MS_PER_DAY = 86_400_000;
const BREAKDOWNS = ['list_name', 'user_group', 'channel', 'page_type'] as const;
type Breakdown = (typeof BREAKDOWNS)[number];

interface ReportQuery {
  from: string;
  to: string;
  granularity: 'day' | 'hour';
  breakdown?: Breakdown;
  limit: number;
}

/** A calendar day `YYYY-MM-DD` that exists (2024-02-30 does not), as its UTC midnight in ms; NaN otherwise. */
function dayMs(value: string): number {
  if (!DAY.test(value)) return NaN;
  const ms = Date.parse(value);
  // Date.parse rolls 2024-02-30 over to March 1st: only a day that prints back unchanged is real.
  return Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== value ? NaN : ms;
}

/**
 * Parses `query` accepting the parameters in `accepted` (beside from and to); throws
 * invalidRequest naming every parameter at fault.
 */
export function parseReportQuery(query: string, limits: ReportsConfig, accepted: ReadonlyArray<'granularity' | 'breakdown' | 'limit'> = []): ReportQuery {
  const q = new URLSearchParams(query);
  const errors: FieldError[] = [];
  const known = new Set<string>(['from', 'to', ...accepted]);
  for (const key of new Set(q.keys())) {
    if (!known.has(key)) errors.push({ path: key, message: 'is not a query parameter of this endpoint' });
    else if (q.getAll(key).length > 1) errors.push({ path: key, message: 'must be given once' });
  }
  const granularity = q.get('granularity') ?? 'day';
  if (granularity !== 'day' && granularity !== 'hour') errors.push({ path: 'granularity', message: "must be 'day' or 'hour'" });
  const breakdown = q.get('breakdown') ?? undefined;
  if (breakdown !== undefined && !(BREAKDOWNS as readonly string[]).includes(breakdown)) {
    errors.push({ path: 'breakdown', message: `must be one of ${BREAKDOWNS.join(', ')}` });
  }
  const rawLimit = q.get('limit');
  if (rawLimit !== null && (!/^\d{1,3}$/.test(rawLimit) || Number(rawLimit) < 1 || Number(rawLimit) > 100)) {
    errors.push({ path: 'limit', message: 'must be an integer from 1 to 100' });
  }
  const rawTo = q.get('to');
  const toMs = rawTo === null ? Date.parse(new Date().toISOString().slice(0, 10)) : dayMs(rawTo);
  if (Number.isNaN(toMs)) errors.push({ path: 'to', message: 'must be a date YYYY-MM-DD' });
  const rawFrom = q.get('from');
  const fromMs = rawFrom === null ? toMs - 6 * MS_PER_DAY : dayMs(rawFrom);
  if (rawFrom !== null && Number.isNaN(fromMs)) errors.push({ path: 'from', message: 'must be a date YYYY-MM-DD' });
  const maxDays = granularity === 'hour' ? limits.maxHourRangeDays : limits.maxRangeDays;
  if (errors.length === 0 && fromMs > toMs) errors.push({ path: 'from', message: "must be on or before 'to'" });
  else if (errors.length === 0 && toMs - fromMs >= maxDays * MS_PER_DAY) {
    errors.push({ path: 'from', message: `must be at most ${maxDays} days before 'to' (the longest ${granularity === 'hour' ? 'hourly ' : ''}report)` });
  }
  if (errors.length > 0) throw E.invalidRequest(fieldErrorsText(errors), errors);
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  return {
    from: day(fromMs),
    to: day(toMs),
    granularity: granularity as 'day' | 'hour',
    ...(breakdown !== undefined ? { breakdown: breakdown as Breakdown } : {}),
    limit: rawLimit === null ? 10 : Number(rawLimit),
  };
}
