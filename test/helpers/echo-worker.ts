// A worker entry for test/helpers/supervised-worker-run.ts: answers 'ping' with 'pong', exits
// with code 3 on 'crash' (an unexpected exit), and on 'stop' says 'bye' and exits, unless it was
// told 'hang' first (then it ignores the stop, as a thread stuck in a long write would).
import { parentPort } from 'node:worker_threads';

let hanging = false;
parentPort!.on('message', (message: string) => {
  if (message === 'ping') parentPort!.postMessage('pong');
  else if (message === 'crash') process.exit(3);
  else if (message === 'hang') hanging = true;
  else if (message === 'stop' && !hanging) {
    parentPort!.postMessage('bye');
    parentPort!.close();
  }
});
parentPort!.postMessage('started');
