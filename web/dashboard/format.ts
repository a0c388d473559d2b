/**
 * @module web/dashboard/format
 * How the dashboard writes figures, shared with its browser test (which formats the reporting
 * API's numbers the same way and expects that text on the page). Pure: no DOM.
 */

const DASH = '–';

/** 0.1234 → `12.34%`; null → `–`. */
export function percent(x: number | null | undefined, digits = 2): string {
  return x === null || x === undefined ? DASH : `${(x * 100).toFixed(digits)}%`;
}

/** A lift with its sign: 0.5 → `+50.00%`, −0.1 → `-10.00%`. */
export function lift(x: number | null | undefined): string {
  return x === null || x === undefined ? DASH : `${x >= 0 ? '+' : ''}${(x * 100).toFixed(2)}%`;
}

/** A 95% interval of a lift: `[+12.00%, +80.50%]`; null → `–`. */
export function interval(ci: readonly [number, number] | readonly number[] | null | undefined): string {
  return ci ? `[${lift(ci[0])}, ${lift(ci[1])}]` : DASH;
}

/** A count with thousands separators: 12345 → `12,345`. */
export function count(n: number | null | undefined): string {
  return n === null || n === undefined ? DASH : Math.round(n).toLocaleString('en-US');
}

/** An amount with two decimals: 1234.5 → `1,234.50`. */
export function money(n: number | null | undefined): string {
  return n === null || n === undefined ? DASH : n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
}

/** A p-value: `0.0012`, or `< 0.0001`. */
export function pValue(p: number | null | undefined): string {
  if (p === null || p === undefined) return DASH;
  return p < 0.0001 ? '< 0.0001' : p.toFixed(4);
}

/** Milliseconds: `1.25 ms`. */
export function ms(x: number | null | undefined): string {
  return x === null || x === undefined ? DASH : `${x.toFixed(2)} ms`;
}
