/**
 * @module serving/task
 * What the main thread sends a ranking worker and what comes back: plain, structured-clone
 * friendly data (a batch of these is one Piscina task). Types only.
 */
import type { ListStrategy } from '../config/types.ts';
import type { ListFilters } from '../domain/list-filters.ts';
import type { StrategyOptions } from '../strategies/strategy.ts';

/** An item named by a request: the type is optional in SPEC.md's HistoryItem and ListContentItem. */
export interface ItemRef {
  id: string;
  type?: string;
}

export interface ListTask {
  strategy: ListStrategy;
  fallback?: ListStrategy;
  /** The list's options for its strategy (config; absent: the strategy's defaults). */
  options?: StrategyOptions;
  /** Items wanted in total (list_size); the whole list is ranked so the list cache can hold it. */
  size: number;
  /** Items the response shows (the first `limit` of the list). */
  limit: number;
  itemTypes: readonly string[];
  /** Configured and requested filters, all applied. */
  filters: ListFilters[];
  informationField?: string;
  /** Mandatory items (list_content): `rank` from 1, or absent for the engine to place. */
  content: Array<ItemRef & { rank?: number }>;
}

export interface RankTask {
  environment: string;
  nowSec: number;
  userId?: string;
  deviceId: string;
  context?: ItemRef;
  /** Request histories, flattened: consumed items unless reconsumable, and personalization seeds. */
  history: Array<ItemRef & { reconsumable: boolean; timestamp?: number }>;
  /** Request-level `exclude`: item ids of any type. */
  exclude: string[];
  lists: ListTask[];
}

/**
 * A ranked list as the worker hands it back: compact for the thread hop and for the list cache
 * (one string, not an array of strings), with the response's items already written as JSON.
 */
export interface RankedList {
  /** Item ids, best first, joined by LIST_ID_SEPARATOR (list-json.ts). */
  ids: string;
  /** The items' ix, for checking a cached list later (CheckTask); its length is the list's. */
  ix: Uint32Array;
  /** The response's `items` array (the first `limit`, ranked from 1) as JSON text. */
  itemsJson: string;
  /** How many items itemsJson holds. */
  shown: number;
  /** information_field of each item, when the list configures one. */
  information?: Array<string | undefined>;
}


/** Which items of a cached list may still be shown: not disabled, deleted or expired since. */
export interface CheckTask {
  environment: string;
  nowSec: number;
  check: Uint32Array;
}

/** One byte per checked ix: 1 when it may still be recommended. */
export interface CheckOutcome {
  rankable: Uint8Array;
}

/** A field error found by the worker (list_content naming an unknown item). */
export interface TaskFieldError {
  path: string;
  message: string;
}

export type RankOutcome = { lists: RankedList[] } | { errors: TaskFieldError[] };
