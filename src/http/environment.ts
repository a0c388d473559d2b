/**
 * @module http/environment
 * The configured environment a path names, for every route under /api/{environment}.
 */
import type { Config, EnvironmentConfig } from '../config/types.ts';
import { E } from '../domain/errors.ts';

/** The environment's configuration; throws E.environmentNotFound (404) for any other name. */
export function environmentOf(environments: Config['environments'], name: string): EnvironmentConfig {
  // Own keys only: a path segment like `toString` or `__proto__` must not reach Object.prototype.
  const env = Object.hasOwn(environments, name) ? environments[name] : undefined;
  if (!env) throw E.environmentNotFound(name);
  return env;
}
