/**
 * @module config/types
 * The shape of the frozen Config every module receives a slice of. Types only.
 */
import type { DisableMarker, FeedFormat, FeedHeader } from '../domain/feed.ts';
import type { ListFilters } from '../domain/list-filters.ts';
import type { StrategyName } from '../strategies/registry.ts';
import type { StrategyOptions } from '../strategies/strategy.ts';

export type ListStrategy = StrategyName;

/** Limits of the token endpoint (config `auth.tokenEndpoint`). */
export interface TokenEndpointLimits {
  /** Requests a source address may make at once, and per minute after that. */
  addressBurst: number;
  addressPerMinute: number;
  /** Requests naming one client id at once, and per minute after that. */
  clientBurst: number;
  clientPerMinute: number;
  /** Failed secrets in a row after which a client id is locked... */
  lockoutFailures: number;
  /** ...for this long; each lockout in a row (no success between) doubles it, up to MAX_LOCKOUT_FACTOR. */
  lockoutSec: number;
}

export interface ListConfig {
  strategy: ListStrategy;
  /** Item types the list may recommend; empty means every type of the environment. */
  itemTypes: string[];
  /** Filters always applied to the list, on top of a request's. */
  filters?: ListFilters;
  /** Item field returned as `information_field` of each recommended item, if any. */
  informationField?: string;
  /** Strategy that fills the list when this one finds too few items (default: the strategy's own). */
  fallback?: ListStrategy;
  /** The strategy's options (strategies/<name>.ts); config/load.ts fills every default. */
  options?: StrategyOptions;
}

/** How the model builder turns events into signals. */
export interface ModelConfig {
  /** Weight of each consumption event type in co-occurrence and popularity; absent types count 0. */
  eventWeights: Record<string, number>;
  /** Recent items kept per user and per device. */
  historyLength: number;
  /** How many of a user's recent items a new consumption is paired with for co-occurrence. */
  cooccurrenceWindow: number;
  /** Neighbours kept per item, strongest first: a row is cut to this many when it passes twice as many (builder/cooccurrence.ts). */
  maxNeighbours: number;
  /** A conversion is attributed to a recommendation click on the same item at most this long before. */
  attributionWindowSec: number;
  /**
   * Time decay of a history entry as a co-occurrence seed of personalized lists: its weight
   * halves every this many seconds before the user's newest entry (0: no decay). Counted from
   * the newest entry, not from the request: how long a user was away leaves their last session
   * its full weight beside the trained model.
   */
  seedHalfLifeSec: number;
  /** The trained model (main-thread/model-trainer.ts), rebuilt in the background from the event log. */
  trained: TrainedModelConfig;
}

/** How the trained item-item model is built and how much it counts in lists. */
export interface TrainedModelConfig {
  enabled: boolean;
  /** `dlae` (denoising linear autoencoder) or `ease`; training/linear-autoencoder.ts. */
  method: 'dlae' | 'ease';
  /** L2 penalty λ (> 0), in units of the squared mean interaction value. */
  l2: number;
  /** DLAE dropout probability, 0 <= p < 1 (ignored by `ease`). */
  dropout: number;
  /**
   * The dense head: this many most-consumed items are learned jointly (O(n³) time, 12·n² bytes);
   * every other item of two users or more by a local regression over its `neighbourhood`
   * strongest co-occurring items (training/sparse-autoencoder.ts).
   */
  maxItems: number;
  /** Weights kept per item (largest magnitude first): what one history item costs a request. */
  rowLength: number;
  /** Co-occurring items a tail item's weights are learned from. */
  neighbourhood: number;
  /** Time decay of events in training: weight halves per this many seconds before the newest event (0: none). */
  halfLifeSec: number;
  /**
   * A rebuild starts once this long passed since the last build and any event arrived; also at
   * once when no model serves and events arrived (0: on demand only, no automatic build).
   */
  rebuildIntervalSec: number;
  /** A rebuild starts when the events since the last build exceed this share of those it covers (0: off). */
  rebuildShare: number;
  /** A build needing more working memory than this fails and the previous model keeps serving. */
  maxMemoryBytes: number;
  /** Weight of the model's scores beside the co-occurrence neighbours (personalized and item-to-item lists). */
  weight: number;
  /**
   * A request scores at most this many of the user's most recent history items through the model
   * (each one a sparse row of rowLength weights); 0: the whole history.
   */
  maxSeeds: number;
  /**
   * An imported event's own `weight` (a rating) enters training raised to this power, times its
   * type's weight: 1 as given, 0 only whether it is above 0 (domain/event-weight.ts).
   */
  ownWeightPower: number;
  /**
   * Short histories weigh their items' rows alike: a request divides each history item's row by
   * its largest |weight| to the power k/(k + n), n the history's distinct items, k this value
   * (halfway at n = k; a long history sums the rows as learned). 0: rows as learned.
   */
  shortHistoryItems: number;
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
  /** Browser origins (`https://shop.example`, or `*`) allowed to call the events and recommendation endpoints. */
  cors: { allowedOrigins: string[] };
  /** Catalog feeds polled for this environment, by feed id (SPEC.md "Feed read (pull)"). */
  feeds: Record<string, FeedConfig>;
  /** Outbound fetches made for this environment (feeds); see ingest/outbound/guard.ts. */
  outbound: OutboundConfig;
}

/**
 * Internal destinations an environment's outbound fetches may reach. Off by default: loopback,
 * private, link-local, unique-local, CGNAT, multicast and unspecified addresses are refused.
 */
export interface OutboundConfig {
  /** Host names (exact, case-insensitive), IP addresses or CIDR ranges (`10.1.0.0/16`, `fd00::/8`) allowed anyway. */
  allow: string[];
}

/** A feed declared in the configuration file (read-only at run time; operators add others by API or CLI). */
export interface FeedConfig {
  url: string;
  format: FeedFormat;
  itemType: string;
  /** Poll interval: `90s`, `15m`, `1h`, `1d` (default 15m). */
  interval?: string;
  authHeader?: FeedHeader;
  disableMarker?: DisableMarker;
  itemsPath?: string;
  mapping?: Record<string, string>;
  delimiter?: string;
}

/** Feed polling and file drops (src/ingest/), shared by all environments. */
export interface IngestConfig {
  feeds: {
    /** One request, connect to last byte. */
    timeoutMs: number;
    /** A body past this many bytes (after decompression) fails the poll. */
    maxBodyBytes: number;
    /** Further attempts after a network error, a timeout, 429 or 5xx, with exponential backoff. */
    retries: number;
    retryBaseMs: number;
    /** Feeds polled at once. */
    concurrency: number;
  };
  imports: {
    /** Largest file POST /{env}/imports accepts. */
    maxUploadBytes: number;
    /** Rows committed per transaction (with the file's progress, so a crash neither loses nor repeats one). */
    batchRows: number;
    /** How often the inbox folders are scanned for dropped files. */
    scanIntervalMs: number;
    /** A dropped file is taken once its size and time have not changed for this long (it may still be uploading). */
    settleMs: number;
  };
}

export interface ServerConfig {
  host: string;
  port: number;
  maxBodyBytes: number;
  /** How long a graceful shutdown waits for in-flight requests before closing anyway. */
  shutdownTimeoutMs: number;
  /** Share the port with other processes (SO_REUSEPORT); off, a port in use fails the start. */
  reusePort: boolean;
  /** A response body at least this large is gzip-compressed when the client accepts gzip. */
  compressMinBytes: number;
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
  /** Internal destinations the JWKS URL may be at (an IdP inside the network); off by default. */
  outbound?: OutboundConfig;
}

export interface AuthConfig {
  issuer: string;
  tokenTtlSec: number;
  /** Verified tokens remembered so the hot path skips signature checks. */
  tokenCacheSize: number;
  /** Create a client for the first environment on first start and print its credentials once. */
  demoClient: boolean;
  external?: ExternalIdpConfig;
  /** Limits of POST /api/oauth/token (auth/attempt-limiter.ts). */
  tokenEndpoint: TokenEndpointLimits;
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

/** The model builder thread. */
export interface BuilderConfig {
  /**
   * Its CPU niceness on Linux (0 = the process's priority, 19 = the lowest): below the serving
   * threads, a builder on a saturated core applies events when requests leave it time.
   */
  niceness: number;
  /**
   * How often, under a steady arrival of events, it writes what it applied to LMDB with its log
   * position (and after a pause of arrivals, at once): the neighbour rows ranking reads are
   * published to shared memory every 100 ms in between. Longer: less CPU per event, more of the
   * log replayed after a crash (never an event lost: the log is durable).
   */
  flushMs: number;
}

/** Limits of the reporting endpoints (GET /{env}/reports and friends). */
export interface ReportsConfig {
  /** Longest day range a report may cover, in days. */
  maxRangeDays: number;
  /** Longest range of an hourly report, in days (24 rows per day and value). */
  maxHourRangeDays: number;
}

export interface Config {
  server: ServerConfig;
  recommend: RecommendConfig;
  builder: BuilderConfig;
  store: StoreConfig;
  auth: AuthConfig;
  ingest: IngestConfig;
  log: {
    level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
    /** Share of requests written as an `info` access line, 0..1 (0: none; errors are always logged). */
    accessSampleRate: number;
  };
  reports: ReportsConfig;
  environments: Record<string, EnvironmentConfig>;
}
