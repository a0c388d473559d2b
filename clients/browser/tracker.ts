/**
 * @module clients/browser/tracker
 * Browser tracker for Affinity's events endpoint (SPEC.md "Events"), one small ES module with no
 * dependencies (built as `tracker.mjs` and as the script-tag global `AffinityTracker`):
 * - `impression` for a recommended item once at least half of it has been visible for one
 *   second (IntersectionObserver), once per request_id, list and item;
 * - `click_on_recommendation` when it is clicked; page views (`page_visit`, or
 *   `detail_pageview` with an item);
 * - request_id, list_name and user_group come from the recommendation response, as SPEC.md
 *   requires, never invented;
 * - events are batched (one POST per `flushMs`), sent with navigator.sendBeacon when the page
 *   is hidden, and kept while the server cannot be reached: retried with backoff, and saved to
 *   localStorage across a page change. Each event carries an event_id, so a batch that reached
 *   the server before the failure was noticed is stored once. It never throws into the page.
 */

export interface TrackerOptions {
  /** Base URL of the API, e.g. `https://reco.example.com/api`. */
  endpoint: string;
  environment: string;
  deviceId: string;
  /** Logged-in user; null for anonymous users (SPEC.md: present, may be null). */
  userId?: string | null;
  channel: string;
  pageType: string;
  /** Batch interval, ms (SPEC.md: 500 ms recommended for backends; 1 s is fine). */
  flushMs?: number;
  /** First retry delay after a failed send, doubled up to 30 s. */
  retryMs?: number;
  /** Visible share and time before an impression counts (defaults 0.5 and 1000 ms). */
  visibleRatio?: number;
  visibleMs?: number;
}

/** The parts of a recommendation response the tracker keeps. */
export interface RecommendationResponse {
  request_id?: string;
  user_group?: string;
}

type TrackedEvent = Record<string, unknown>;

const STORAGE_KEY = 'affinity.tracker.pending';
const MAX_PENDING = 1000;
const MAX_RETRY_MS = 30_000;

function eventId(): string {
  return typeof crypto !== 'undefined' && 'randomUUID' in crypto ? crypto.randomUUID() : `${Date.now()}-${Math.random().toString(36).slice(2)}`;
}

export class Tracker {
  readonly #o: Required<Omit<TrackerOptions, 'userId'>> & { userId: string | null };
  #queue: TrackedEvent[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #sending = false;
  #failures = 0;
  /** request_id, list, item of impressions already sent (once each). */
  readonly #seen = new Set<string>();
  readonly #observer: IntersectionObserver | undefined;
  readonly #pendingVisible = new Map<Element, ReturnType<typeof setTimeout>>();
  readonly #attribution = new WeakMap<Element, TrackedEvent>();

  constructor(options: TrackerOptions) {
    this.#o = { flushMs: 1000, retryMs: 1000, visibleRatio: 0.5, visibleMs: 1000, userId: null, ...options };
    this.#queue = this.#restore();
    if (typeof IntersectionObserver !== 'undefined') {
      this.#observer = new IntersectionObserver((entries) => this.#onVisibility(entries), { threshold: [0, this.#o.visibleRatio] });
    }
    addEventListener('pagehide', () => this.#leave());
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'hidden') this.#leave();
    });
    if (this.#queue.length > 0) this.#schedule(0);
  }

  /** Events waiting to be sent (a copy). */
  get pending(): TrackedEvent[] {
    return [...this.#queue];
  }

  /** A page view: `detail_pageview` when the page shows an item, else `page_visit`. */
  pageView(item?: { id: string; type: string }): void {
    this.#push(item ? { event_type: 'detail_pageview', action_item: item.id, action_item_type: item.type } : { event_type: 'page_visit' });
  }

  /**
   * Watches the items of one rendered list: every element under `container` with
   * `data-item-id` (and `data-item-type`) gets its impression and click tracked with this
   * response's request_id and user_group and the given list name.
   */
  observeList(container: Element, response: RecommendationResponse, listName: string): void {
    if (!response.request_id || !response.user_group) return;
    for (const el of container.querySelectorAll<HTMLElement>('[data-item-id]')) {
      const attribution = {
        list_name: listName,
        request_id: response.request_id,
        user_group: response.user_group,
        action_item: el.dataset.itemId!,
        action_item_type: el.dataset.itemType ?? 'item',
      };
      this.#attribution.set(el, attribution);
      this.#observer?.observe(el);
      el.addEventListener('click', () => {
        this.#push({ event_type: 'click_on_recommendation', ...attribution });
        // A click usually leaves the page: hand the batch over now.
        this.#leave();
      });
    }
  }

  /** Sends what is queued now (resolves when the attempt ends; failures keep the events). */
  flush(): Promise<void> {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    return this.#send();
  }

  #onVisibility(entries: IntersectionObserverEntry[]): void {
    for (const entry of entries) {
      const el = entry.target;
      const visible = entry.isIntersecting && entry.intersectionRatio >= this.#o.visibleRatio;
      const waiting = this.#pendingVisible.get(el);
      if (!visible) {
        if (waiting !== undefined) clearTimeout(waiting);
        this.#pendingVisible.delete(el);
        continue;
      }
      if (waiting !== undefined) continue;
      this.#pendingVisible.set(
        el,
        setTimeout(() => {
          this.#pendingVisible.delete(el);
          const a = this.#attribution.get(el);
          if (!a) return;
          const id = `${a.request_id}\u0000${a.list_name}\u0000${a.action_item_type}\u0000${a.action_item}`;
          if (this.#seen.has(id)) return;
          this.#seen.add(id);
          this.#observer?.unobserve(el);
          this.#push({ event_type: 'impression', ...a });
        }, this.#o.visibleMs),
      );
    }
  }

  #push(event: TrackedEvent): void {
    this.#queue.push({
      page_type: this.#o.pageType,
      device_id: this.#o.deviceId,
      user_id: this.#o.userId,
      channel: this.#o.channel,
      event_id: eventId(),
      ...event,
    });
    if (this.#queue.length > MAX_PENDING) this.#queue.splice(0, this.#queue.length - MAX_PENDING);
    if (this.#timer === undefined && !this.#sending) this.#schedule(this.#o.flushMs);
  }

  #schedule(ms: number): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#send();
    }, ms);
  }

  get #url(): string {
    return `${this.#o.endpoint.replace(/\/$/, '')}/${encodeURIComponent(this.#o.environment)}/events`;
  }

  async #send(): Promise<void> {
    if (this.#sending || this.#queue.length === 0) return;
    this.#sending = true;
    const batch = this.#queue.slice();
    let delivered = false;
    try {
      // text/plain keeps it a simple CORS request (no preflight); the server reads JSON anyway.
      const res = await fetch(this.#url, { method: 'POST', body: JSON.stringify({ events: batch }), headers: { 'Content-Type': 'text/plain;charset=UTF-8' }, keepalive: true });
      // A 4xx will not get better by retrying: the batch is dropped (and the page keeps working).
      delivered = res.ok || (res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429);
    } catch {
      delivered = false;
    }
    this.#sending = false;
    if (delivered) {
      this.#queue.splice(0, batch.length);
      this.#failures = 0;
      this.#save();
      if (this.#queue.length > 0) this.#schedule(this.#o.flushMs);
    } else {
      this.#failures++;
      this.#schedule(Math.min(MAX_RETRY_MS, this.#o.retryMs * 2 ** (this.#failures - 1)));
    }
  }

  /** The page is going away or hidden: beacon the queue, or keep it for the next page while the server is unreachable. */
  #leave(): void {
    if (this.#queue.length === 0 || this.#sending) {
      this.#save();
      return;
    }
    const body = new Blob([JSON.stringify({ events: this.#queue })], { type: 'text/plain;charset=UTF-8' });
    if (this.#failures === 0 && typeof navigator.sendBeacon === 'function' && navigator.sendBeacon(this.#url, body)) {
      this.#queue = [];
      if (this.#timer !== undefined) clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    this.#save();
  }

  #save(): void {
    try {
      if (this.#queue.length > 0) localStorage.setItem(STORAGE_KEY, JSON.stringify(this.#queue));
      else localStorage.removeItem(STORAGE_KEY);
    } catch {
      // Storage full or disabled: the events stay in memory only.
    }
  }

  #restore(): TrackedEvent[] {
    try {
      const saved = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? '[]') as unknown;
      return Array.isArray(saved) ? (saved as TrackedEvent[]) : [];
    } catch {
      return [];
    }
  }
}

/** Starts a tracker for this page. */
export function createTracker(options: TrackerOptions): Tracker {
  return new Tracker(options);
}
