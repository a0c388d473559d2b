/**
 * @module config/types
 * The shape of the frozen Config every module receives a slice of. Types only.
 */

export type ListStrategy = 'personalized' | 'item_to_item' | 'trending' | 'popular' | 'latest';

/**
 * Filters on the filterable item fields (DESIGN.md): within a field any value matches, across
 * fields all must. A category path matches an item with a path that starts with it.
 */
export interface ListFilters {
  categories?: Array<string | string[]>;
  flags?: string[];
  language?: string | string[];
  access_type?: string | string[];
  item_type?: string | string[];
  /** Configured attribute keys (EnvironmentConfig.filterAttributes) → accepted value(s). */
  item_attributes?: Record<string, string | string[]>;
}

export interface ListConfig {
  strategy: ListStrategy;
  /** Item types the list may recommend; empty means every type of the environment. */
  itemTypes: string[];
  /** Filters always applied to the list, on top of a request's. */
  filters?: ListFilters;
  /** Item field returned as `information_field` of each recommended item, if any. */
  informationField?: string;
  /** Strategy that fills the list when this one finds too few items. */
  fallback?: ListStrategy;
}

/** How the model builder turns events into signals. */
export interface ModelConfig {
  /** Weight of each consumption event type in co-occurrence and popularity; absent types count 0. */
  eventWeights: Record<string, number>;
  /** Recent items kept per user and per device. */
  historyLength: number;
  /** How many of a user's recent items a new consumption is paired with for co-occurrence. */
  cooccurrenceWindow: number;
  /** Neighbours kept per item, strongest first. */
  maxNeighbours: number;
  /** A conversion is attributed to a recommendation click on the same item at most this long before. */
  attributionWindowSec: number;
}

export interface EnvironmentConfig {
  itemTypes: string[];
  /** Page types and channels accepted on top of SPEC.md's standard values. */
  pageTypes: string[];
  channels: string[];
  lists: Record<string, ListConfig>;
  /** `item_attributes` keys that list filters may name (string values only). */
  filterAttributes: string[];
  listCache: { enabled: boolean; ttlSec: number };
  serviceGroup: string;
  /** Control groups and their share of traffic, 0..1. */
  controlGroups: Record<string, number>;
  model: ModelConfig;
}

export interface ServerConfig {
  host: string;
  port: number;
  maxBodyBytes: number;
  /** How long a graceful shutdown waits for in-flight requests before closing anyway. */
  shutdownTimeoutMs: number;
}

export interface StoreConfig {
  dataDir: string;
  mapSizeBytes: number;
}

export interface ExternalIdpConfig {
  issuer: string;
  audience: string;
  jwksUrl: string;
  /** Claim holding the environments a token may use (array or space-separated string). */
  environmentsClaim: string;
}

export interface AuthConfig {
  issuer: string;
  tokenTtlSec: number;
  /** Verified tokens remembered so the hot path skips signature checks. */
  tokenCacheSize: number;
  /** Create a client for the first environment on first start and print its credentials once. */
  demoClient: boolean;
  external?: ExternalIdpConfig;
}

/** The ranking worker pool (Piscina) and the list cache, shared by all environments. */
export interface RecommendConfig {
  /** Ranking worker threads. */
  workers: number;
  /** Requests waiting for a worker beyond which a new one gets 503. */
  maxQueue: number;
  /** A request not answered by then gets 503 with Retry-After. */
  deadlineMs: number;
  /** Requests sent to a worker in one task (fewer thread hops under load). */
  maxBatch: number;
  /** Largest list_size a request may ask for. */
  maxListSize: number;
  /** Item ids the list cache holds at most, over all its lists (oldest lists dropped first). */
  listCacheItems: number;
}

export interface Config {
  server: ServerConfig;
  recommend: RecommendConfig;
  store: StoreConfig;
  auth: AuthConfig;
  log: { level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent' };
  environments: Record<string, EnvironmentConfig>;
}
