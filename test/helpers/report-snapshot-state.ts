// A report state (builder/report-snapshot.ts) large enough to take several 4 MB chunks, the same for
// the same position: clicks under user and device ids with a few label sets, and units of two days.
import type { ReportSnapshot, Unit } from '../../src/builder/report-snapshot.ts';

export function reportSnapshotOf(position: number, clicks = 160_000): ReportSnapshot {
  const t0 = Date.UTC(2026, 0, 5) + position;
  const lists = ['popular', 'trending', undefined];
  const state: ReportSnapshot = { position, mayExist: position % 2 === 0, newestT: t0 + clicks, clicks: [], units: new Map() };
  for (let i = 0; i < clicks; i++) {
    const memory = { t: t0 + i, list_name: lists[i % 3], user_group: i % 2 ? 'affinity' : 'customer', channel: 'www', page_type: i % 5 ? 'home' : undefined };
    state.clicks.push({ id: `${i % 2 ? 'user' : 'device'}-${i}-${position}`, itemKey: `article\u0000item-${i % 997}`, memory });
  }
  for (const day of ['2026-01-04', '2026-01-05']) {
    const byWho = new Map<string, Unit>();
    for (let u = 0; u < 20_000; u++) byWho.set(`user-${u}`, [u % 7 ? 0 : u * 1.5, u % 7 ? 0 : 1]);
    state.units.set(day, new Map([['affinity', byWho]]));
  }
  return state;
}
