/**
 * @module http/port-check
 * Fails a start early when the listening port is taken, before the store, the builder and the
 * workers open: a second service on the same port must not touch any data directory.
 */
import { createServer } from 'node:net';
import { PortUnavailableError } from './server.ts';

/** Resolves when `host:port` can be bound (port 0 always can); rejects with PortUnavailableError. */
export function assertPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', () => reject(new PortUnavailableError(host, port)));
    // exclusive: a clustered process must not share the probe with another one.
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}
