// Preload (--import) for test/helpers/rank-worker-timers.ts: in every worker thread, answers a
// message on the BroadcastChannel 'worker-timer-probe' with the thread's id and how many timers its
// event loop holds (process.getActiveResourcesInfo). A worker whose event loop never turns never
// answers. Nothing in the main thread.
import { BroadcastChannel, isMainThread, threadId } from 'node:worker_threads';

if (!isMainThread) {
  const channel = new BroadcastChannel('worker-timer-probe');
  channel.unref();
  channel.onmessage = () => {
    const timers = process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    channel.postMessage({ threadId, timers });
  };
}
