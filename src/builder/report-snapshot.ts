/**
 * @module builder/report-snapshot
 * The report counters' state that is not a counter (builder/reports.ts): the clicks a later
 * conversion may be attributed to and the A/B units of the recent days, with the log position
 * they cover, as one checked blob (store/blob-snapshot.ts). Written a record per click and per
 * unit at every flush, they were ~3,000 puts a second at the events bench's steady ~9,600
 * events/s and 11.9 ms of CPU per one-second commit (issue 12 asks under 1 ms); as a snapshot
 * every minute, a restart loads it and applies the log after its position to this state alone
 * (the counters already hold it). The clicked items' count chunks are written with it, and so
 * recounted from its position too: their ~300 chunk puts a second were most of what was left of
 * a one-second commit (5.2 ms of CPU).
 *
 * | key (db)                                 | value                                  |
 * |------------------------------------------|----------------------------------------|
 * | [env, 'repsnap', 'meta'] (reportState)   | ReportSnapshotMeta                     |
 * | [env, 'repsnap', 'chunk', i] (reportBlobs) | bytes of the blob, 4 MB at most        |
 */
import { ByteReader, ByteWriter, putBlobSnapshot, readBlobSnapshot, type BlobSnapshotMeta, type BlobSnapshotPlace } from '../store/blob-snapshot.ts';
import type { Store } from '../store/open.ts';

/** What a click leaves behind for attributing a later conversion. */
export type ClickMemory = {
  t: number;
  list_name?: string | undefined;
  user_group?: string | undefined;
  channel?: string | undefined;
  page_type?: string | undefined;
};

/** A click memory under one of the ids it was made with (user, device, session). */
export interface ClickEntry {
  id: string;
  itemKey: string;
  memory: ClickMemory;
}

/** An A/B unit (one user on one day in one group): attributed revenue and whether it purchased. */
export type Unit = [revenue: number, converted: 0 | 1];

/** A/B units by day, group and who. */
export type Units = Map<string, Map<string, Map<string, Unit>>>;

export interface ReportSnapshot {
  /** Last event sequence number applied to this state. */
  position: number;
  /** Whether clicks or units may be stored a record each (written before snapshots, or spilled). */
  mayExist: boolean;
  /** Acceptance time of the newest event applied (Unix ms). */
  newestT: number;
  /** Oldest first (the order they were last set in). */
  clicks: ClickEntry[];
  units: Units;
}

export type ReportSnapshotMeta = BlobSnapshotMeta;

const FORMAT = 1;
const WHAT = 'report state snapshot';
const place = (store: Store, env: string): BlobSnapshotPlace => ({
  metaDb: store.reportState,
  metaKey: [env, 'repsnap', 'meta'],
  chunkDb: store.reportBlobs,
  chunkKey: (i) => [env, 'repsnap', 'chunk', i],
});

/** The four labels of a click, interned: a few distinct sets are shared by every click. */
const LABELS = ['list_name', 'user_group', 'channel', 'page_type'] as const;

export function encodeReportSnapshot(s: ReportSnapshot): Buffer {
  const w = new ByteWriter();
  w.f64(s.position);
  w.u32(s.mayExist ? 1 : 0);
  w.f64(s.newestT);
  // Label sets by nested lookups (no string built per click).
  const contexts: ClickMemory[] = [];
  const index = new Map<unknown, unknown>();
  const contextOf = new Uint32Array(s.clicks.length);
  s.clicks.forEach(({ memory }, c) => {
    let level = index;
    for (let l = 0; l < LABELS.length - 1; l++) {
      const label = memory[LABELS[l]!];
      let next = level.get(label) as Map<unknown, unknown> | undefined;
      if (!next) level.set(label, (next = new Map()));
      level = next;
    }
    let id = level.get(memory.page_type) as number | undefined;
    if (id === undefined) level.set(memory.page_type, (id = contexts.push(memory) - 1));
    contextOf[c] = id;
  });
  w.u32(contexts.length);
  for (const context of contexts) for (const label of LABELS) w.string(context[label] ?? '');
  w.u32(s.clicks.length);
  s.clicks.forEach(({ id, itemKey, memory }, c) => {
    w.string(id);
    w.string(itemKey);
    w.f64(memory.t);
    w.u32(contextOf[c]!);
  });
  w.u32(s.units.size);
  for (const [day, byGroup] of s.units) {
    w.string(day);
    w.u32(byGroup.size);
    for (const [group, byWho] of byGroup) {
      w.string(group);
      w.u32(byWho.size);
      for (const [who, [revenue, converted]] of byWho) {
        w.string(who);
        w.f64(revenue);
        w.u32(converted);
      }
    }
  }
  return w.written;
}

export function decodeReportSnapshot(bytes: Buffer): ReportSnapshot {
  const r = new ByteReader(bytes, WHAT);
  const position = r.f64();
  const mayExist = r.u32() === 1;
  const newestT = r.f64();
  const contexts: Array<Omit<ClickMemory, 't'>> = [];
  for (let n = r.u32(); n > 0; n--) {
    const context: Omit<ClickMemory, 't'> = {};
    // '' is what an absent label was written as: the reports never keep an empty label.
    for (const label of LABELS) context[label] = r.string() || undefined;
    contexts.push(context);
  }
  const clicks: ClickEntry[] = [];
  for (let n = r.u32(); n > 0; n--) {
    const id = r.string();
    const itemKey = r.string();
    const t = r.f64();
    const context = contexts[r.u32()];
    if (!context) throw new Error(`${WHAT} click ${clicks.length} names a label set of ${contexts.length} that does not exist`);
    clicks.push({ id, itemKey, memory: { t, ...context } });
  }
  const units: Units = new Map();
  for (let days = r.u32(); days > 0; days--) {
    const byGroup = new Map<string, Map<string, Unit>>();
    units.set(r.string(), byGroup);
    for (let groups = r.u32(); groups > 0; groups--) {
      const byWho = new Map<string, Unit>();
      byGroup.set(r.string(), byWho);
      for (let n = r.u32(); n > 0; n--) byWho.set(r.string(), [r.f64(), r.u32() === 1 ? 1 : 0]);
    }
  }
  r.end();
  return { position, mayExist, newestT, clicks, units };
}

/** Puts the encoded snapshot (encodeReportSnapshot) covering `position`: call inside a write transaction. */
export function putReportSnapshot(store: Store, env: string, position: number, encoded: Buffer): void {
  putBlobSnapshot<ReportSnapshotMeta>(place(store, env), { format: FORMAT, position }, encoded);
}

/**
 * The stored snapshot, none, or why the one stored cannot be used; `position` is what its meta
 * says it covers whenever the meta could be read (what was written beside it covers the same).
 */
export function readReportSnapshot(store: Store, env: string): { snapshot?: ReportSnapshot; problem?: string; position?: number } {
  const { meta, bytes, problem } = readBlobSnapshot<ReportSnapshotMeta>(place(store, env), FORMAT, WHAT);
  const position = typeof meta?.position === 'number' ? meta.position : undefined;
  if (!bytes) return problem ? { problem, position } : {};
  try {
    const snapshot = decodeReportSnapshot(bytes);
    if (snapshot.position !== position) return { problem: `${WHAT} covers ${snapshot.position}, its meta says ${position}`, position };
    return { snapshot, position };
  } catch (err) {
    return { problem: (err as Error).message, position };
  }
}
