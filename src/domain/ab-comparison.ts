/**
 * @module domain/ab-comparison
 * The A/B statistics of the reports (docs/reference.md, "Reports and dashboard"): relative lift
 * of the service group over a control group with a 95% confidence interval and a two-sided
 * p-value, from counters alone so a report never reads individual events. Pure.
 *
 * - Rates (CTR = clicks / impressions, conversion rate = converting user-days / user-days):
 *   two-proportion z-test (pooled) for the p-value; the interval of the relative lift is the
 *   log risk-ratio (Katz) interval, exp(ln(p1/p2) ± 1.96·√(1/x1 − 1/n1 + 1/x2 − 1/n2)) − 1.
 * - Revenue per user-day: delta method on the ratio of two means, each mean's variance from the
 *   unit sums Σr and Σr²: Var(ln(m1/m2)) ≈ s1²/(n1·m1²) + s2²/(n2·m2²); Welch z for the p-value.
 */

const Z95 = 1.959963984540054;

export interface Arm {
  /** Point value of the metric in this group (null when it has no denominator). */
  value: number | null;
  /** Sample size: impressions for CTR, user-days otherwise. */
  n: number;
}

export interface Comparison {
  service: Arm;
  control: Arm;
  /** service / control − 1; null when the control value is 0 or missing. */
  lift: number | null;
  /** 95% interval of the lift; null when a group has no successes (the interval is unbounded). */
  ci95: [low: number, high: number] | null;
  p_value: number | null;
}

/** Standard normal CDF (Abramowitz–Stegun 7.1.26 through erf, |error| < 1.5e-7). */
function normalCdf(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const erf = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x);
  return z >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

const twoSided = (z: number) => Math.min(1, 2 * (1 - normalCdf(Math.abs(z))));
const round = (x: number) => Math.round(x * 1e6) / 1e6;

/** Lift of rate x1/n1 (service) over x2/n2 (control). */
export function compareRates(x1: number, n1: number, x2: number, n2: number): Comparison {
  const p1 = n1 > 0 ? x1 / n1 : null;
  const p2 = n2 > 0 ? x2 / n2 : null;
  const out: Comparison = { service: { value: p1 === null ? null : round(p1), n: n1 }, control: { value: p2 === null ? null : round(p2), n: n2 }, lift: null, ci95: null, p_value: null };
  if (p1 === null || p2 === null) return out;
  if (p2 > 0) out.lift = round(p1 / p2 - 1);
  const pooled = (x1 + x2) / (n1 + n2);
  const se0 = Math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2));
  if (se0 > 0) out.p_value = round(twoSided((p1 - p2) / se0));
  if (x1 > 0 && x2 > 0) {
    const se = Math.sqrt(Math.max(0, 1 / x1 - 1 / n1 + 1 / x2 - 1 / n2));
    const log = Math.log(p1 / p2);
    out.ci95 = [round(Math.exp(log - Z95 * se) - 1), round(Math.exp(log + Z95 * se) - 1)];
  }
  return out;
}

/** Sums of one group's units: count, Σr, Σr². */
interface UnitSums {
  n: number;
  sum: number;
  sumSq: number;
}

function meanAndVariance({ n, sum, sumSq }: UnitSums): [mean: number, variance: number] {
  const mean = sum / n;
  return [mean, n > 1 ? Math.max(0, (sumSq - n * mean * mean) / (n - 1)) : 0];
}

/** Lift of the service group's mean per unit over the control's (delta method). */
export function compareMeans(service: UnitSums, control: UnitSums): Comparison {
  const out: Comparison = {
    service: { value: service.n > 0 ? round(service.sum / service.n) : null, n: service.n },
    control: { value: control.n > 0 ? round(control.sum / control.n) : null, n: control.n },
    lift: null,
    ci95: null,
    p_value: null,
  };
  if (service.n === 0 || control.n === 0) return out;
  const [m1, v1] = meanAndVariance(service);
  const [m2, v2] = meanAndVariance(control);
  if (m2 > 0) out.lift = round(m1 / m2 - 1);
  const seDiff = Math.sqrt(v1 / service.n + v2 / control.n);
  if (seDiff > 0) out.p_value = round(twoSided((m1 - m2) / seDiff));
  if (m1 > 0 && m2 > 0) {
    const se = Math.sqrt(v1 / (service.n * m1 * m1) + v2 / (control.n * m2 * m2));
    const log = Math.log(m1 / m2);
    out.ci95 = [round(Math.exp(log - Z95 * se) - 1), round(Math.exp(log + Z95 * se) - 1)];
  }
  return out;
}
