/**
 * @module store/change-signal
 * Wakes the model builder when the catalog or an event log has new commits, from whichever
 * thread committed them (the HTTP thread, the ingest worker), so the builder sleeps while
 * nothing arrives instead of polling LMDB. One BroadcastChannel; a thread posts at most one wake
 * per event-loop turn however many commits the turn made, so under load the wake costs a flag
 * check per commit. The builder treats a wake as a hint and reads the store's counters itself.
 */
import { BroadcastChannel } from 'node:worker_threads';

const NAME = 'affinity:store:changed';

let channel: BroadcastChannel | undefined;
let posted = false;

function open(): BroadcastChannel {
  const c = new BroadcastChannel(NAME);
  // Must not keep a stopping thread alive.
  c.unref();
  return c;
}

/** After a commit the builder must apply (catalog write, event batch). */
export function signalStoreChange(): void {
  if (posted) return;
  posted = true;
  channel ??= open();
  channel.postMessage(0);
  setImmediate(() => (posted = false));
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
