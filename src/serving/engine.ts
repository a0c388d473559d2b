/**
 * @module serving/engine
 * One ranking worker's recommendation engine: per environment a WASM ranker over the catalog
 * view's resident arrays, and per request the strategies that decide what to rank. For each
 * list, in request order: resolve its mandatory items, rank its strategy, fill what is missing
 * from the fallback chain, place the mandatory items; every item chosen is excluded from the
 * lists after it. The kernel does the numeric work; this module gathers its inputs (LMDB reads
 * of the user's and the device's consumer records and of neighbour rows into reused buffers;
 * item ids from the catalog view's own index) and turns ix back into ids.
 */
import type { Config } from '../config/types.ts';
import { pointer } from '../domain/field-errors.ts';
import { withRoom } from '../domain/grown.ts';
import { Catalog } from '../store/catalog.ts';
import { CHANGES_POSITION_KEY, consumerHistoryEnd, copyU32Into, deviceRecordKey, EVENT_TYPE_CODES, userRecordKey } from '../store/model-layout.ts';
import type { Store } from '../store/open.ts';
import { CatalogView } from './catalog-view.ts';
import { NeighbourRows } from './neighbour-rows.ts';
import { LiveRowReader, type LiveRowsMemory } from '../store/live-rows.ts';
import { WasmRanker } from '../ranker/kernel.ts';
import { VECTOR_DIM, type RankInput, type Ranker } from '../ranker/reference-ranker.ts';
import { CandidateInput } from '../strategies/candidate-input.ts';
import { strategyChain } from '../strategies/registry.ts';
import type { StrategyRequest } from '../strategies/strategy.ts';
import type { Notice } from './notices.ts';
import { RECENT_STRIDE, RecentConsumption, type ResolveItem } from './recent-consumption.ts';
import { Signals } from './signals.ts';
import { TrainedScores } from './trained-scores.ts';
import { UserSeeds } from './user-seeds.ts';
import { itemsJson, LIST_ID_SEPARATOR, splitIds } from './list-json.ts';
import type { CheckOutcome, CheckTask, ItemRef, ListTask, RankOutcome, RankTask, RankedList, TaskFieldError } from './task.ts';

/** Neighbours a row read keeps (item_to_item reads them all; personalized its strongest 30). */
const ITEM_ROW = 100;
/**
 * Entries of a ranked list (popular, trending, latest) tried first: enough for nearly every
 * request after exclusions; the whole list only when they fall short.
 */
const TOP_LIST_HEAD = 256;
/** A strategy ranks from the head of its list first, then (a deepening one, when that fell short) from all of it. */
const DEPTHS = [TOP_LIST_HEAD, Infinity] as const;
const CONTEXT_SEED_WEIGHT = 2;
const CHANGES_PER_SYNC = 10_000;
/** Neighbour rows a worker keeps per environment (ITEM_ROW entries of 8 bytes at most each). */
const MAX_CACHED_ROWS = 100_000;
/**
 * Time a sync gives to reading a new model version's rows ahead (trained-scores.ts warm): ~50
 * rows; at 100,000 items a version's 51,000 rows are read within ~1,000 batches of its switch.
 */
const WARM_MS_PER_SYNC = 0.2;
/** Time the engine's start gives to reading the serving model's rows ahead, before it reports ready. */
const START_WARM_MS = 400;
/** A half-life the kernel reads as "no decay" (model.seedHalfLifeSec 0): 2^(-age / 3e38) = 1 in f32. */
const NO_DECAY_SEC = 3e38;

/** An empty pool or exclusion list: a typed array allocated per ranking showed in its profile. */
const NO_IX = new Uint32Array(0);

/**
 * A stored history entry's seed weight by its event type code (model.eventWeights; 1 for a type
 * without one): indexed per entry instead of code → name → weight lookups by string.
 */
function weightByCode(eventWeights: Readonly<Record<string, number>>): Float64Array {
  const weights = new Float64Array(Math.max(...Object.values(EVENT_TYPE_CODES)) + 1).fill(1);
  for (const [name, code] of Object.entries(EVENT_TYPE_CODES)) weights[code] = eventWeights[name] ?? 1;
  return weights;
}

interface Environment {
  view: CatalogView;
  ranker: Ranker;
  signals: Signals;
  trained: TrainedScores;
  /** Every ix, for the catalog-wide last resort. */
  everyIx: Uint32Array;
  /** Neighbour rows read so far; the builder's rows notices drop the ones it rewrote. */
  rows: NeighbourRows;
  /** A model notice arrived (or none was read yet): the next sync reads the current version. */
  trainedStale: boolean;
  /** weightByCode of the environment's model.eventWeights. */
  eventWeight: Float64Array;
  /** The ix of an item the view holds, else undefined (recent consumption's resolution on arrival). */
  resolveInView: ResolveItem;
}

/** What one request knows about its user, gathered once for all its lists. */
interface UserContext extends StrategyRequest {
  /** The request's seeds (the engine's reused UserSeeds: valid until the next request). */
  readonly seeds: UserSeeds;
  /** Never recommended: consumed (not reconsumable), excluded, context, and items already chosen. */
  readonly exclude: number[];
}

export class Engine {
  readonly #store: Store;
  readonly #catalog: Catalog;
  readonly #environments = new Map<string, Environment>();
  /** What the strategies hand the kernel, rebuilt per ranking in reused memory. */
  readonly #candidates = new CandidateInput(VECTOR_DIM);
  readonly #recent = new RecentConsumption();
  readonly #seeds = new UserSeeds();
  #exclude = new Uint32Array(256);
  /** The request's user's and device's consumer records (store/model-layout.ts), read into reused memory. */
  #userRecord = new Uint32Array(3 * 128);
  #deviceRecord = new Uint32Array(3 * 128);
  #changesPosition: number;

  /** `liveRows`: the model builder's neighbour rows in shared memory, read before LMDB. */
  constructor(store: Store, environments: Config['environments'], liveRows?: Record<string, LiveRowsMemory>) {
    this.#store = store;
    this.#catalog = new Catalog(store);
    // From the builder's position: the views read its content vectors, and every change after
    // it is replayed (recomputing them), so none is older than its item.
    this.#changesPosition = (store.modelState.get(CHANGES_POSITION_KEY) as number | undefined) ?? 0;
    for (const [name, config] of Object.entries(environments)) {
      const ranker = new WasmRanker();
      const view = new CatalogView(store, name, config, ranker);
      const signals = new Signals(store, view);
      const trained = new TrainedScores(store, view, config.model.trained);
      // A stored row holds up to twice maxNeighbours (builder/cooccurrence.ts): its strongest maxNeighbours serve.
      const rowLength = Math.min(ITEM_ROW, config.model.maxNeighbours);
      const live = liveRows?.[name];
      const rows = new NeighbourRows(store, name, rowLength, MAX_CACHED_ROWS * rowLength, live && new LiveRowReader(live, config.model.maxNeighbours));
      const resolveInView: ResolveItem = (itemType, id) => view.ixOf(itemType, id);
      this.#environments.set(name, { view, ranker, signals, trained, everyIx: new Uint32Array(0), rows, trainedStale: true, eventWeight: weightByCode(config.model.eventWeights), resolveInView });
    }
    this.sync(Date.now());
    for (const env of this.#environments.values()) env.signals.refresh(Date.now(), true);
    // Before the first request, the most consumed columns' rows: read on demand instead, they
    // cost the first minute of serving at 1,000,000 items ~20 rows a request (a 3 s warm-up's
    // bench round paid them). 100,000 items' rows take ~0.2 s in all; 1,000,000 items' 1.5 s.
    const warmUntil = performance.now() + START_WARM_MS;
    for (const env of this.#environments.values()) env.trained.warm(warmUntil);
  }

  /** Catches up with the catalog change feed and refreshes signals when due; once per batch. */
  sync(nowMs: number): void {
    // One counter read when nothing changed (most batches), instead of a range scan.
    while (this.#catalog.lastChangeSeq() > this.#changesPosition) {
      const changes = this.#catalog.changesSince(this.#changesPosition, CHANGES_PER_SYNC);
      for (const change of changes) this.#environments.get(change.environment)?.view.apply(change);
      if (changes.length === 0) break;
      this.#changesPosition = changes[changes.length - 1]!.seq;
    }
    for (const env of this.#environments.values()) {
      // A new trained version (a rebuild) brings the popularity prior up to date with it: lists
      // asked after a rebuild's 200 do not depend on when the last refresh happened (issue 13).
      env.signals.refresh(nowMs, env.trainedStale);
      if (env.trainedStale) {
        env.trained.refresh();
        env.trainedStale = false;
      }
      env.trained.warm(performance.now() + WARM_MS_PER_SYNC);
    }
  }

  /** Consumption the events API accepted (notices.ts): excluded from the user's next lists. */
  consumed({ environment, entries }: Extract<Notice, { kind: 'consumed' }>): void {
    const env = this.#environments.get(environment);
    // Items the view holds are resolved now (a map lookup); others (an LMDB read) when read.
    if (env) this.#recent.record(environment, entries, Date.now(), env.resolveInView);
  }

  /** Neighbour rows the builder rewrote: read anew when next needed. */
  rowsChanged({ environment, ix }: Extract<Notice, { kind: 'rows' }>): void {
    const rows = this.#environments.get(environment)?.rows;
    if (!rows) return;
    for (let i = 0; i < ix.length; i++) rows.drop(ix[i]!);
  }

  /** A new trained model version is current: the next sync switches to it, between two batches. */
  modelChanged({ environment }: Extract<Notice, { kind: 'model' }>): void {
    const env = this.#environments.get(environment);
    if (env) env.trainedStale = true;
  }

  /** Notices were lost: drop what they keep fresh (recent consumption, rows) and re-read the model. */
  noticesLost(): void {
    this.#recent.clear();
    for (const env of this.#environments.values()) {
      env.rows.clear();
      env.trainedStale = true;
    }
  }

  recommend(task: RankTask): RankOutcome {
    const env = this.#environments.get(task.environment);
    if (!env) return { errors: [{ path: '(environment)', message: `'${task.environment}' is not served by this worker` }] };
    const errors: TaskFieldError[] = [];
    const content = task.lists.map((list, i) =>
      list.content.map((c, j) => {
        const ix = this.#resolve(env, c);
        if (ix === undefined || !env.view.inCatalog(ix)) errors.push({ path: pointer('lists', i, 'list_content', j, 'id'), message: `'${c.id}' is not an item of this environment` });
        return { ix: ix ?? -1, rank: c.rank };
      }),
    );
    if (errors.length > 0) return { errors };
    const user = this.#userContext(env, task);
    const lists: RankedList[] = [];
    task.lists.forEach((list, i) => {
      const mandatory = content[i]!.filter((c) => env.view.isRankable(c.ix, task.nowSec));
      for (const c of mandatory) user.exclude.push(c.ix);
      const ranked = this.#rankList(env, task, list, user, Math.max(0, list.size - mandatory.length));
      const placed = place(ranked, mandatory, list.size);
      for (const ix of ranked) user.exclude.push(ix);
      lists.push(this.#toIds(env, list, placed));
    });
    return { lists };
  }

  #resolve(env: Environment, ref: ItemRef): number | undefined {
    const types = ref.type === undefined ? env.view.config.itemTypes : [ref.type];
    for (const type of types) {
      const ix = this.#ixOf(env, type, ref.id);
      if (ix !== undefined && (ref.type !== undefined || env.view.inCatalog(ix))) return ix;
    }
    return undefined;
  }

  /** An item's ix: from the view's own index, else LMDB's (an item known only from events, or not applied yet). */
  #ixOf(env: Environment, type: string, id: string): number | undefined {
    return env.view.ixOf(type, id) ?? this.#store.itemIndex.get([env.view.environment, type, id]);
  }

  /** Reads a consumer record into the user's or the device's reused memory; returns its words (0: none stored). */
  #readConsumer(key: string[], device: boolean): number {
    const bytes = this.#store.model.getBinaryFast(key);
    if (!bytes) return 0;
    if (device) this.#deviceRecord = copyU32Into(this.#deviceRecord, bytes);
    else this.#userRecord = copyU32Into(this.#userRecord, bytes);
    return bytes.length >>> 2;
  }

  #userContext(env: Environment, task: RankTask): UserContext {
    const weights = env.eventWeight;
    const seeds = this.#seeds;
    seeds.reset(env.view.capacity);
    // One record per consumer: its history seeds now, its consumed set once every seed is known.
    const environment = env.view.environment;
    const userWords = task.userId ? this.#readConsumer(userRecordKey(environment, task.userId), false) : 0;
    const deviceWords = task.deviceId !== 'no-consent' ? this.#readConsumer(deviceRecordKey(environment, task.deviceId), true) : 0;
    const stored = (record: Uint32Array, words: number) => {
      const end = consumerHistoryEnd(record, words);
      for (let i = 1; i + 2 < end; i += 3) {
        const ix = record[i]!;
        seeds.markConsumed(ix);
        seeds.add(ix, weights[record[i + 1]!] ?? 1, record[i + 2]!);
      }
    };
    stored(this.#userRecord, userWords);
    stored(this.#deviceRecord, deviceWords);
    const recent = (entries: readonly number[] | undefined) => {
      for (let i = 0; entries && i + RECENT_STRIDE <= entries.length; i += RECENT_STRIDE) {
        const ix = entries[i]!;
        if (ix < 0) continue; // an item not in the catalog when the entry was read
        seeds.markConsumed(ix);
        seeds.add(ix, entries[i + 2]!, entries[i + 1]!);
      }
    };
    const resolveItem = (type: string, id: string) => this.#resolve(env, { id, type });
    if (task.userId) recent(this.#recent.ofUser(environment, task.userId, resolveItem));
    if (task.deviceId !== 'no-consent') recent(this.#recent.ofDevice(environment, task.deviceId, resolveItem));
    for (const h of task.history) {
      const ix = this.#resolve(env, h);
      if (ix === undefined) continue; // perhaps still in ingestion: not an error (DESIGN.md)
      if (h.reconsumable) seeds.markReconsumable(ix);
      else seeds.markConsumed(ix);
      seeds.add(ix, 1, h.timestamp ?? 0);
    }
    const contextIx = task.context ? this.#resolve(env, task.context) : undefined;
    if (contextIx !== undefined) seeds.add(contextIx, CONTEXT_SEED_WEIGHT, 0);
    const exclude: number[] = [];
    // Every consumed item is a seed: the seeds, in the order seen, list them once each.
    for (let s = 0; s < seeds.count; s++) {
      const ix = seeds.ix[s]!;
      if (seeds.isConsumed(ix) && !seeds.isReconsumable(ix)) exclude.push(ix);
    }
    // Everything ever consumed, beyond the history's window (builder/consumed-sets.ts).
    const everConsumed = (record: Uint32Array, words: number) => {
      for (let at = Math.max(1, consumerHistoryEnd(record, words)); at < words; at++) {
        const ix = record[at]!;
        if (!seeds.isConsumed(ix) && !seeds.isReconsumable(ix)) exclude.push(ix);
      }
    };
    everConsumed(this.#userRecord, userWords);
    everConsumed(this.#deviceRecord, deviceWords);
    for (const id of task.exclude) {
      for (const type of env.view.config.itemTypes) {
        const ix = this.#ixOf(env, type, id);
        if (ix !== undefined) exclude.push(ix);
      }
    }
    if (contextIx !== undefined) exclude.push(contextIx);
    return { nowSec: task.nowSec, contextIx, seeds, exclude };
  }

  /** Up to `k` ix for the list: its strategy, then its fallback chain, then the whole catalog (strategies/registry.ts). */
  #rankList(env: Environment, task: RankTask, list: ListTask, user: UserContext, k: number): number[] {
    const out: number[] = [];
    if (k === 0) return out;
    const typesMask = env.view.typesMask(list.itemTypes, list.filters);
    const allow = env.view.allowBitset(list.filters);
    const excludeBase = user.exclude.length;
    const chain = strategyChain(list.strategy, list.fallback);
    for (let s = 0; s < chain.length && out.length < k; s++) {
      const strategy = chain[s]!;
      // The list's options for its own strategy; a fallback ranks with its defaults.
      const options = (s === 0 && list.options) || strategy.defaults;
      for (const depth of DEPTHS) {
        const candidates = this.#candidates;
        candidates.reset();
        if (!strategy.candidates(env, user, candidates, options, depth)) break;
        const input = this.#rankInput(env, task, candidates, k - out.length);
        input.allowedTypesMask = typesMask;
        input.allow = allow;
        input.exclude = this.#excludeOf(user.exclude);
        const result = env.ranker.rank(input);
        for (const ix of result.ix) {
          out.push(ix);
          user.exclude.push(ix);
        }
        // A second, deeper pass only for a ranked list whose head was too short.
        if (out.length >= k || !strategy.deepens || candidates.t < depth) break;
      }
    }
    user.exclude.length = excludeBase;
    return out;
  }

  /** The kernel's input of what a strategy gathered. */
  #rankInput(env: Environment, task: RankTask, c: CandidateInput, k: number): RankInput {
    return {
      k,
      nowSec: task.nowSec,
      allowedTypesMask: 0,
      seedWeight: c.seedWeight.subarray(0, c.m),
      seedTime: c.seedTime.subarray(0, c.m),
      seedHalfLifeSec: env.view.config.model.seedHalfLifeSec || NO_DECAY_SEC,
      neighbourOffsets: c.offsets.subarray(0, c.m + 1),
      neighbourIx: c.nbIx.subarray(0, c.t),
      neighbourWeight: c.nbWeight.subarray(0, c.t),
      pool: c.pool,
      exclude: NO_IX,
      popularityWeight: c.popularityWeight,
      recencyWeight: c.recencyWeight,
      recencyHalfLifeSec: c.recencyHalfLifeSec,
      contentWeight: c.contentWeight,
      context: c.context,
    };
  }

  /** The exclusions as the kernel takes them, in reused memory (the kernel copies its inputs). */
  #excludeOf(exclude: readonly number[]): Uint32Array {
    this.#exclude = withRoom(this.#exclude, exclude.length);
    for (let i = 0; i < exclude.length; i++) this.#exclude[i] = exclude[i]!;
    return this.#exclude.subarray(0, exclude.length);
  }

  #toIds(env: Environment, list: ListTask, placed: number[]): RankedList {
    const values = list.informationField ? env.view.information.get(list.informationField) : undefined;
    const information = list.informationField ? placed.map((i) => values?.get(i)) : undefined;
    const joined = env.view.ids.join(placed, LIST_ID_SEPARATOR);
    const shownIds = splitIds(joined, placed.length, list.limit);
    const items = itemsJson(shownIds, information, 1, list.limit);
    return { ids: joined, ix: Uint32Array.from(placed), itemsJson: items.json, shown: items.count, ...(information ? { information } : {}) };
  }

  /** Which of a cached list's items may still be recommended (in catalog, enabled, not expired). */
  check({ environment, nowSec, check }: CheckTask): CheckOutcome {
    const rankable = new Uint8Array(check.length);
    const view = this.#environments.get(environment)?.view;
    if (view) for (let i = 0; i < check.length; i++) rankable[i] = view.isRankable(check[i]!, nowSec) ? 1 : 0;
    return { rankable };
  }
}

/**
 * The list with mandatory items in place: ranked ones at their rank, unranked ones at the first
 * free places (they are what the caller most wants shown), the engine's items in the gaps. When
 * the engine found too few, the gaps close up so ranks stay consecutive.
 */
export function place(ranked: readonly number[], mandatory: ReadonlyArray<{ ix: number; rank?: number | undefined }>, size: number): number[] {
  const slots: Array<number | undefined> = new Array(size);
  for (const m of mandatory) if (m.rank !== undefined) slots[m.rank - 1] = m.ix;
  const unranked = mandatory.filter((m) => m.rank === undefined).map((m) => m.ix);
  let u = 0;
  let r = 0;
  for (let i = 0; i < size; i++) {
    if (slots[i] !== undefined) continue;
    if (u < unranked.length) slots[i] = unranked[u++];
    else if (r < ranked.length) slots[i] = ranked[r++];
  }
  return slots.filter((ix): ix is number => ix !== undefined);
}
