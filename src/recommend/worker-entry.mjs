// Piscina loads this plain module: Node 20 does not run tsx's loader in worker threads, so it is
// registered here before the TypeScript worker is imported, and its handler re-exported.
import { register } from 'tsx/esm/api';

register();
const { default: rankBatch } = await import('./worker.ts');
export default rankBatch;
