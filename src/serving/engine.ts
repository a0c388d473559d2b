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
import type { Config, ListStrategy } from '../config/types.ts';
import { grown, withRoom } from '../domain/grown.ts';
import { Catalog } from '../store/catalog.ts';
import { CHANGES_POSITION_KEY, consumerHistoryEnd, copyU32Into, deviceRecordKey, EVENT_TYPE_CODES, userRecordKey } from '../store/model.ts';
import type { Store } from '../store/open.ts';
import { CatalogView } from './catalog-view.ts';
import { NeighbourRows } from './neighbour-rows.ts';
import { LiveRowReader, type LiveRowsMemory } from '../store/live-rows.ts';
import { WasmRanker } from '../ranker/kernel.ts';
import { VECTOR_DIM as DIM, type RankInput, type Ranker } from '../ranker/reference-ranker.ts';

/** A local copy: a module import is read through a getter, which showed in profiles of the hot loops. */
const VECTOR_DIM = DIM;
import type { Notice } from './notices.ts';
import { RECENT_STRIDE, RecentConsumption, type ResolveItem } from './recent-consumption.ts';
import { Signals, type TopList } from './signals.ts';
import { TrainedScores } from './trained-scores.ts';
import { UserSeeds } from './user-seeds.ts';
import { itemsJson, LIST_ID_SEPARATOR, splitIds } from './list-json.ts';
import type { CheckOutcome, CheckTask, ItemRef, ListTask, RankOutcome, RankTask, RankedList, TaskFieldError } from './task.ts';

// Candidate budgets: the kernel's cost is about linear in candidates (each one a few cache
// misses), so these bound a ranking to a few hundred of them.
/** Seeds a personalized list grows from: the most recent distinct items. */
const MAX_SEEDS = 10;
/** Neighbours read per seed row (rows are stored strongest first). */
const PERSONAL_ROW = 30;
const ITEM_ROW = 100;
/** Items sharing categories or tags with a context item, scored by content similarity. */
const SIMILAR_POOL = 200;
/**
 * Entries of a ranked list (popular, trending, latest) tried first: enough for nearly every
 * request after exclusions; the whole list only when they fall short.
 */
const TOP_LIST_HEAD = 256;
const DAY = 86_400;
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

/**
 * Trained-model candidates handed to the kernel per list: a few times the list so filters and
 * exclusions rarely empty it (the fallback chain fills what they do).
 */
const TRAINED_CANDIDATES = 50;
/** Seeds' ages count in whole hours (below an hour, no decay): an hour of a 14-day half-life is 0.2%. */
const SEED_AGE_STEP_SEC = 3600;
/** A half-life the kernel reads as "no decay" (model.seedHalfLifeSec 0): 2^(-age / 3e38) = 1 in f32. */
const NO_DECAY_SEC = 3e38;

/** Ranking parameters per strategy; quality tuning (issue 5) changes these numbers only. */
const TUNING = {
  recencyHalfLifeSec: 7 * DAY,
  personalized: { popularityWeight: 0.05, contentWeight: 0.3 },
  itemToItem: { popularityWeight: 0.05, contentWeight: 0.5 },
  /** The catalog-wide last resort: popular first, then recent. */
  catalog: { popularityWeight: 1, recencyWeight: 0.5 },
} as const;

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

/** Growable typed buffers for one ranking's inputs, reused across rankings. */
class InputBuffers {
  seedWeight = new Float32Array(64);
  seedTime = new Uint32Array(64);
  offsets = new Uint32Array(65);
  nbIx = new Uint32Array(4096);
  nbWeight = new Float32Array(4096);
  m = 0;
  t = 0;

  reset(): void {
    this.m = 0;
    this.t = 0;
    this.offsets[0] = 0;
  }

  /** Adds a seed whose neighbour row comes after (addRow / addNeighbours). */
  addSeed(weight: number, time: number): void {
    if (this.m + 2 > this.seedWeight.length) {
      this.seedWeight = grown(this.seedWeight, this.m * 2);
      this.seedTime = grown(this.seedTime, this.m * 2);
      this.offsets = grown(this.offsets, this.m * 2 + 1);
    }
    this.seedWeight[this.m] = weight;
    this.seedTime[this.m] = time;
    this.m++;
    this.offsets[this.m] = this.t;
  }

  #reserve(extra: number): void {
    if (this.t + extra <= this.nbIx.length) return;
    const size = Math.max(this.t + extra, this.nbIx.length * 2);
    this.nbIx = grown(this.nbIx, size);
    this.nbWeight = grown(this.nbWeight, size);
  }

  /** Appends the first `max` entries of a row (neighbours, or a ranked list) as the last seed's row. */
  addRow(row: TopList, max: number): void {
    this.addEntries(row.ix, row.weight, 0, Math.min(max, row.ix.length));
  }

  /** Appends the first `max` entries of item `ix`'s neighbour row (read from the arena) as the last seed's row. */
  addNeighbours(rows: NeighbourRows, ix: number, max: number): void {
    const at = rows.row(ix);
    this.addEntries(rows.ixOf(at), rows.weightOf(at), rows.offsetOf(at), Math.min(max, rows.lengthOf(ix)));
  }

  /** Appends entries [start, start + n) of (ix, weight) arrays as the last seed's row. */
  addEntries(ix: Uint32Array, weight: Float32Array, start: number, n: number): void {
    this.#reserve(n);
    const t = this.t;
    for (let k = 0; k < n; k++) {
      this.nbIx[t + k] = ix[start + k]!;
      this.nbWeight[t + k] = weight[start + k]!;
    }
    this.t += n;
    this.offsets[this.m] = this.t;
  }

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
interface UserContext {
  contextIx: number | undefined;
  /** The request's seeds (the engine's reused UserSeeds: valid until the next request). */
  seeds: UserSeeds;
  /** Never recommended: consumed (not reconsumable), excluded, context, and items already chosen. */
  exclude: number[];
  /** The trained model's candidates for this user (computed at the first list that needs them). */
  trained?: TopList | null;
}

export class Engine {
  readonly #store: Store;
  readonly #catalog: Catalog;
  readonly #environments = new Map<string, Environment>();
  readonly #buffers = new InputBuffers();
  readonly #similar: number[] = [];
  readonly #recent = new RecentConsumption();
  readonly #seeds = new UserSeeds();
  /** Kernel inputs rebuilt per ranking, in reused memory. */
  readonly #context = new Float32Array(VECTOR_DIM);
  #exclude = new Uint32Array(256);
  #pool = new Uint32Array(SIMILAR_POOL);
  readonly #recentSeeds = new Uint32Array(MAX_SEEDS);
  #trainedSeeds = new Uint32Array(0);
  #trainedIx = new Uint32Array(256);
  #trainedWeight = new Float32Array(256);
  /** The request's user's and device's consumer records (store/model.ts), read into reused memory. */
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
        if (ix === undefined || !env.view.inCatalog(ix)) errors.push({ path: `lists[${i}].list_content[${j}].id`, message: `'${c.id}' is not an item of this environment` });
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
    return { contextIx, seeds, exclude };
  }

  /** Up to `k` ix for the list: its strategy, then its fallback chain, then the whole catalog. */
  #rankList(env: Environment, task: RankTask, list: ListTask, user: UserContext, k: number): number[] {
    const out: number[] = [];
    if (k === 0) return out;
    const chain: Array<ListStrategy | 'catalog'> = [list.strategy];
    for (const s of [list.fallback, 'popular', 'latest', 'catalog'] as const) if (s && !chain.includes(s)) chain.push(s);
    const typesMask = env.view.typesMask(list.itemTypes, list.filters);
    const allow = env.view.allowBitset(list.filters);
    const excludeBase = user.exclude.length;
    for (const strategy of chain) {
      for (const depth of [TOP_LIST_HEAD, Infinity]) {
        const input = this.#input(env, task, strategy, user, k - out.length, depth);
        if (!input) break;
        input.allowedTypesMask = typesMask;
        input.allow = allow;
        input.exclude = this.#excludeOf(user.exclude);
        const result = env.ranker.rank(input);
        for (const ix of result.ix) {
          out.push(ix);
          user.exclude.push(ix);
        }
        // A second, deeper pass only for a ranked list whose head was too short.
        if (out.length >= k || !isTopList(strategy) || input.neighbourIx.length < depth) break;
      }
      if (out.length >= k) break;
    }
    user.exclude.length = excludeBase;
    return out;
  }

  /** The kernel input of one strategy, or null when it has nothing to rank from. */
  #input(env: Environment, task: RankTask, strategy: ListStrategy | 'catalog', user: UserContext, k: number, depth: number): RankInput | null {
    const b = this.#buffers;
    b.reset();
    let pool: Uint32Array = NO_IX;
    let context: Float32Array | null = null;
    let popularityWeight = 0;
    let recencyWeight = 0;
    let contentWeight = 0;
    switch (strategy) {
      case 'personalized': {
        const seeds = user.seeds;
        if (seeds.count === 0) return null;
        const recent = this.#recentSeeds;
        const n = seeds.mostRecent(MAX_SEEDS, recent);
        context = this.#context.fill(0);
        // Ages count from the user's newest seed (model.seedHalfLifeSec): the kernel decays by
        // now − time, so a seed goes in as now − its age (from the request instead when a seed
        // is "now", time 0, such as the context item). On MovieLens's time split (lists asked at the data's
        // end), decay from the request left nothing of this part to users last seen months
        // before: nDCG@10 0.2049 with it, 0.2127 from the newest seed (issue 13).
        const newest = n > 0 ? seeds.time[recent[0]!]! : 0;
        const ageFrom = newest > 0 && task.nowSec > newest ? newest : task.nowSec;
        for (let r = 0; r < n; r++) {
          const ix = seeds.ix[recent[r]!]!;
          const weight = seeds.weight[recent[r]!]!;
          const time = seeds.time[recent[r]!]!;
          // Ages in whole SEED_AGE_STEP_SEC: a burst of events is stamped over a second or two,
          // differently each time it arrives, and a second more of age (5.7e-7 less weight at
          // 14 days) could swap near-equal candidates (issue 13: results may not depend on when
          // the same events arrived).
          const age = Math.max(0, ageFrom - time);
          b.addSeed(weight, time === 0 ? 0 : task.nowSec - (age - (age % SEED_AGE_STEP_SEC)));
          b.addNeighbours(env.rows, ix, PERSONAL_ROW);
          env.ranker.addVector(ix, weight, context);
        }
        normalise(context);
        const trained = this.#trainedForUser(env, task, user);
        if (trained) {
          b.addSeed(env.view.config.model.trained.weight, 0);
          b.addRow(trained, trained.ix.length);
        }
        ({ popularityWeight, contentWeight } = TUNING.personalized);
        break;
      }
      case 'item_to_item': {
        const ix = user.contextIx;
        if (ix === undefined || ix >= env.view.capacity) return null;
        b.addSeed(1, 0);
        b.addNeighbours(env.rows, ix, Infinity);
        const trained = env.trained.forItem(ix, user.exclude, TRAINED_CANDIDATES);
        if (trained) {
          b.addSeed(env.view.config.model.trained.weight, 0);
          b.addRow(trained, trained.ix.length);
        }
        context = this.#context.fill(0);
        env.ranker.addVector(ix, 1, context);
        const similar = env.view.similarCandidates(ix, SIMILAR_POOL, this.#similar);
        // No category or tag to go by: content similarity over the whole catalog (rare: an O(n) pass).
        if (similar.length > 0) {
          this.#pool = withRoom(this.#pool, similar.length);
          for (let i = 0; i < similar.length; i++) this.#pool[i] = similar[i]!;
          pool = this.#pool.subarray(0, similar.length);
        } else pool = this.#everyIx(env);
        ({ popularityWeight, contentWeight } = TUNING.itemToItem);
        break;
      }
      case 'popular':
      case 'trending':
      case 'latest': {
        const list = strategy === 'popular' ? env.signals.popular : strategy === 'trending' ? env.signals.trending : env.view.latestList();
        if (list.ix.length === 0) return null;
        b.addSeed(1, 0);
        b.addRow(list, depth);
        break;
      }
      case 'catalog': {
        pool = this.#everyIx(env);
        ({ popularityWeight, recencyWeight } = TUNING.catalog);
        break;
      }
    }
    return {
      k,
      nowSec: task.nowSec,
      allowedTypesMask: 0,
      seedWeight: b.seedWeight.subarray(0, b.m),
      seedTime: b.seedTime.subarray(0, b.m),
      seedHalfLifeSec: env.view.config.model.seedHalfLifeSec || NO_DECAY_SEC,
      neighbourOffsets: b.offsets.subarray(0, b.m + 1),
      neighbourIx: b.nbIx.subarray(0, b.t),
      neighbourWeight: b.nbWeight.subarray(0, b.t),
      pool,
      exclude: NO_IX,
      popularityWeight,
      recencyWeight,
      recencyHalfLifeSec: TUNING.recencyHalfLifeSec,
      contentWeight,
      context,
    };
  }

  /**
   * The trained model's candidates for the user's history (its model.trained.maxSeeds most recent
   * items, more than the co-occurrence's MAX_SEEDS: the model weighs a history as a whole). Seeds decay with the
   * model's own half-life (model.trained.halfLifeSec, the one it was trained with; 0 = none),
   * not the co-occurrence seeds' one: the model stands for lasting taste, the co-occurrence
   * neighbours for what the user is doing now. Once per request.
   */
  #trainedForUser(env: Environment, task: RankTask, user: UserContext): TopList | undefined {
    if (user.trained !== undefined) return user.trained ?? undefined;
    const { halfLifeSec: halfLife, maxSeeds } = env.view.config.model.trained;
    const seeds = user.seeds;
    const n = maxSeeds > 0 && seeds.count > maxSeeds ? seeds.mostRecent(maxSeeds, (this.#trainedSeeds = withRoom(this.#trainedSeeds, maxSeeds))) : seeds.count;
    const order = n < seeds.count ? this.#trainedSeeds : undefined;
    const ixs = (this.#trainedIx = withRoom(this.#trainedIx, n));
    const weights = (this.#trainedWeight = withRoom(this.#trainedWeight, n));
    for (let r = 0; r < n; r++) {
      const s = order ? order[r]! : r;
      const time = seeds.time[s]!;
      const age = time === 0 ? 0 : Math.max(0, task.nowSec - time);
      ixs[r] = seeds.ix[s]!;
      weights[r] = halfLife > 0 ? seeds.weight[s]! * 2 ** (-age / halfLife) : seeds.weight[s]!;
    }
    const top = env.trained.forSeeds(ixs, weights, n, user.exclude, TRAINED_CANDIDATES);
    user.trained = top ?? null;
    return top;
  }

  /** The exclusions as the kernel takes them, in reused memory (the kernel copies its inputs). */
  #excludeOf(exclude: readonly number[]): Uint32Array {
    this.#exclude = withRoom(this.#exclude, exclude.length);
    for (let i = 0; i < exclude.length; i++) this.#exclude[i] = exclude[i]!;
    return this.#exclude.subarray(0, exclude.length);
  }

  #everyIx(env: Environment): Uint32Array {
    if (env.everyIx.length !== env.view.capacity) env.everyIx = Uint32Array.from({ length: env.view.capacity }, (_, i) => i);
    return env.everyIx;
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

const isTopList = (strategy: ListStrategy | 'catalog') => strategy === 'popular' || strategy === 'trending' || strategy === 'latest';

function normalise(v: Float32Array): void {
  let norm = 0;
  for (let d = 0; d < v.length; d++) norm += v[d]! * v[d]!;
  if (norm === 0) return;
  const scale = 1 / Math.sqrt(norm);
  for (let d = 0; d < v.length; d++) v[d]! *= scale;
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
