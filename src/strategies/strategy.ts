/**
 * @module strategies/strategy
 * What a list strategy is: a name, the options a list of it may set (a JSON Schema whose
 * properties all have defaults), the strategy that fills its list when it finds too few, and
 * its candidate generation: what it hands the kernel to rank (seed rows, a pool, priors).
 *
 * The configuration names and validates strategies on the main thread; the ranking workers run
 * them. So this folder sits below both and imports neither: what a strategy reads of a ranking
 * worker's environment and of a request is described here by shape (StrategyEnvironment,
 * StrategyRequest), and the engine (serving/engine.ts) passes its own objects, which have it.
 */
import type { CandidateInput, NeighbourRowSource, TopList } from './candidate-input.ts';

/** What strategies read of one environment in a ranking worker (the engine's Environment). */
export interface StrategyEnvironment {
  readonly view: {
    readonly capacity: number;
    /** ix by publication time, newest first, the LATEST_SIZE newest (may hold items since disabled). */
    readonly latest: readonly number[];
    readonly published: Uint32Array;
    readonly config: { readonly model: { readonly trained: { readonly weight: number; readonly halfLifeSec: number; readonly maxSeeds: number } } };
    latestList(): TopList;
    similarCandidates(ix: number, max: number, out: number[]): number[];
    /** ix's category keys (ids), deepest first, into `out`. */
    categoriesOf(ix: number, out: number[]): number[];
    /** How many category and other filter keys the view knows: key ids are below it. */
    readonly keyCount: number;
  };
  readonly signals: { readonly popular: TopList; readonly trending: TopList };
  readonly rows: NeighbourRowSource;
  readonly trained: {
    forSeeds(seedIx: Uint32Array, seedWeight: Float32Array, seeds: number, exclude: readonly number[], max: number): TopList | undefined;
    forItem(ix: number, exclude: readonly number[], max: number): TopList | undefined;
  };
  readonly ranker: { addVector(ix: number, weight: number, out: Float32Array): void };
  /** Every ix, for a pass over the whole catalog (everyIx below keeps it). */
  everyIx: Uint32Array;
}

/** The request's seeds: its user's and device's history, request histories, the context item. */
export interface Seeds {
  readonly count: number;
  readonly ix: Uint32Array;
  readonly weight: Float32Array;
  /** Seconds; 0 for "now" (the context item, a history entry without a timestamp). */
  readonly time: Uint32Array;
  /** Indices (into ix, weight, time) of the `max` most recent seeds, newest first, into `out`; returns how many. */
  mostRecent(max: number, out: Uint32Array): number;
}

/** What one request asks, as every strategy of its lists reads it. */
export interface StrategyRequest {
  readonly nowSec: number;
  readonly seeds: Seeds;
  readonly contextIx: number | undefined;
  /** Never recommended: consumed, excluded, the context, and items already chosen. */
  readonly exclude: readonly number[];
  /** The trained model's candidates for this user, once computed by a list (null: none). */
  trained?: TopList | null;
}

/** A strategy's options: numbers, each with its default in `optionsSchema`. */
export type StrategyOptions = Readonly<Record<string, number>>;

export interface Strategy<Name extends string = string> {
  readonly name: Name;
  /** The strategy that fills a list of this one when it finds too few, unless the list names another. */
  readonly fallback?: string;
  /**
   * A ranked list read head first: the engine asks again with `depth` Infinity when exclusions
   * and filters left fewer than asked from the head.
   */
  readonly deepens?: boolean;
  /** JSON Schema of each option a list may set (`lists.<name>.options`), each with a `default`. */
  readonly optionsSchema: Readonly<Record<string, { type: 'number' | 'integer'; minimum: number; maximum: number; default: number }>>;
  /** Every option at its default (from optionsSchema): what a list that sets none, or a fallback, ranks with. */
  readonly defaults: StrategyOptions;
  /**
   * Fills `input` with what to rank for the request; false when the strategy has nothing to rank
   * from (the next one of the chain is tried). `depth`: entries of a ranked list to read.
   */
  candidates(env: StrategyEnvironment, request: StrategyRequest, input: CandidateInput, options: StrategyOptions, depth: number): boolean;
}

/** An option weighing one of the kernel's terms (popularity, recency, content similarity), with its default. */
export const weightOption = (defaultWeight: number) => ({ type: 'number', minimum: 0, maximum: 1000, default: defaultWeight }) as const;

/** A strategy with its name's literal type kept (the configuration's enum is derived from them) and its defaults. */
export function defineStrategy<const Name extends string>(strategy: Omit<Strategy<Name>, 'defaults'>): Strategy<Name> {
  const defaults = Object.freeze(Object.fromEntries(Object.entries(strategy.optionsSchema).map(([key, schema]) => [key, schema.default])));
  return { ...strategy, defaults };
}

/**
 * Trained-model candidates handed to the kernel per list: a few times the list so filters and
 * exclusions rarely empty it (the fallback chain fills what they do).
 */
export const TRAINED_CANDIDATES = 50;

/** Every ix of the environment's view, kept on the environment until the catalog grows. */
export function everyIx(env: StrategyEnvironment): Uint32Array {
  if (env.everyIx.length !== env.view.capacity) env.everyIx = Uint32Array.from({ length: env.view.capacity }, (_, i) => i);
  return env.everyIx;
}
