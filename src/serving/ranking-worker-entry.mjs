// Piscina loads this plain module: it imports the ranking worker from dist/ or through tsx
// (../load-entry.mjs) and re-exports its handler.
import { importEntry } from '../threads/load-entry.mjs';

const { default: rankBatch } = await importEntry(new URL('./ranking-worker.ts', import.meta.url).href);
export default rankBatch;
