/**
 * @module store/change-signal
 * Wakes the model builder when the catalog or an event log has new commits, from whichever
 * thread committed them (the HTTP thread, the ingest worker), so the builder sleeps while
 * nothing arrives instead of polling LMDB. One BroadcastChannel; a thread posts at most one wake
 * per MIN_POST_INTERVAL_MS however many commits it made (the last one always gets its wake), so
 * under load the wake costs a clock read per commit. The builder treats a wake as a hint and
 * reads the store's counters itself.
 */
import { BroadcastChannel } from 'node:worker_threads';

const NAME = 'affinity:store:changed';

/**
 * Least time between two posts of one thread. A post costs the posting thread ~1 ms of CPU
 * under load (a pinned PUT run: 7% of the main thread at one post per group commit), and a
 * woken reader catches up with everything committed since; so commits within this window share
 * one post, sent at its end.
 */
const MIN_POST_INTERVAL_MS = 5;

let channel: BroadcastChannel | undefined;
let lastPostAt = -Infinity;
let trailing: NodeJS.Timeout | undefined;

function open(): BroadcastChannel {
  const c = new BroadcastChannel(NAME);
  // Must not keep a stopping thread alive.
  c.unref();
  return c;
}

function post(): void {
  trailing = undefined;
  lastPostAt = performance.now();
  channel ??= open();
  channel.postMessage(0);
}

/** After a commit the builder must apply (catalog write, event batch): posts now or at the window's end. */
export function signalStoreChange(): void {
  if (trailing) return;
  const wait = lastPostAt + MIN_POST_INTERVAL_MS - performance.now();
  if (wait <= 0) post();
  // unref: a stopping thread does not wait for it (its readers look at the store on start).
  else trailing = setTimeout(post, wait).unref();
}

/**
 * Builder side: calls `wake` on every signal. The listener runs on the builder's event loop, so
 * a builder busy in a synchronous step sees the wake when it next yields.
 */
export function onStoreChange(wake: () => void): () => void {
  const c = new BroadcastChannel(NAME);
  c.unref();
  c.onmessage = () => wake();
  return () => c.close();
}
