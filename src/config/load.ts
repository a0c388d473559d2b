/**
 * @module config/load
 * The only reader of process.env and of the config file. Precedence: embedded defaults < file
 * (JSON or YAML) < AFFINITY_* variables. Returns one deep-frozen Config or throws ConfigError
 * listing every problem by key.
 */
import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { Ajv } from 'ajv';
import { feedDefinitionProblems, parseInterval } from '../domain/feed.ts';
import { LIST_FILTERS_SCHEMA, filterProblems } from '../domain/list-filters.ts';
import { allowListProblems, parseAllowList } from '../outbound/allow-list.ts';
import { literalRefusal } from '../outbound/guard.ts';
import { optionsSchemaOf, STRATEGIES, strategyNamed } from '../strategies/registry.ts';
import { DEFAULT_CONFIG, ENVIRONMENT_DEFAULTS } from './defaults.ts';
import { validateConfig } from './schema.ts';
import type { Config } from './types.ts';

const validateFilters = new Ajv({ allErrors: true }).compile(LIST_FILTERS_SCHEMA);
const optionsAjv = new Ajv({ allErrors: true });
const validateOptions = new Map(STRATEGIES.map((s) => [s.name as string, optionsAjv.compile(optionsSchemaOf(s))]));

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

type Parse = (raw: string, name: string) => unknown;

const integer: Parse = (raw, name) => {
  if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError([`${name} must be an integer, got '${raw}'`]);
  return Number(raw);
};
const text: Parse = (raw) => raw;
const decimal: Parse = (raw, name) => {
  if (!/^\s*\d+(\.\d+)?\s*$/.test(raw)) throw new ConfigError([`${name} must be a number, got '${raw}'`]);
  return Number(raw);
};
const bool: Parse = (raw, name) => {
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError([`${name} must be a boolean (true/false), got '${raw}'`]);
};

/** Environment variable bindings, later rows win (so AFFINITY_PORT beats PORT). */
const ENV_BINDINGS: ReadonlyArray<readonly [path: string, name: string, parse: Parse]> = [
  ['server.port', 'PORT', integer],
  ['server.port', 'AFFINITY_PORT', integer],
  ['server.host', 'AFFINITY_HOST', text],
  ['server.maxBodyBytes', 'AFFINITY_MAX_BODY_BYTES', integer],
  ['server.shutdownTimeoutMs', 'AFFINITY_SHUTDOWN_TIMEOUT_MS', integer],
  ['store.dataDir', 'AFFINITY_DATA_DIR', text],
  ['store.mapSizeBytes', 'AFFINITY_MAP_SIZE_BYTES', integer],
  ['auth.tokenTtlSec', 'AFFINITY_TOKEN_TTL_SEC', integer],
  ['auth.demoClient', 'AFFINITY_DEMO_CLIENT', bool],
  ['log.level', 'AFFINITY_LOG_LEVEL', text],
  ['log.accessSampleRate', 'AFFINITY_ACCESS_LOG_SAMPLE_RATE', decimal],
  ['server.reusePort', 'AFFINITY_REUSE_PORT', bool],
  ['recommend.workers', 'AFFINITY_RANK_WORKERS', integer],
  ['recommend.deadlineMs', 'AFFINITY_RANK_DEADLINE_MS', integer],
  ['builder.niceness', 'AFFINITY_BUILDER_NICENESS', integer],
  ['builder.flushMs', 'AFFINITY_BUILDER_FLUSH_MS', integer],
  ['ingest.feeds.timeoutMs', 'AFFINITY_FEED_TIMEOUT_MS', integer],
  ['ingest.imports.maxUploadBytes', 'AFFINITY_IMPORT_MAX_UPLOAD_BYTES', integer],
  ['ingest.imports.batchRows', 'AFFINITY_IMPORT_BATCH_ROWS', integer],
  ['ingest.imports.settleMs', 'AFFINITY_IMPORT_SETTLE_MS', integer],
  ['reports.maxRangeDays', 'AFFINITY_REPORT_MAX_RANGE_DAYS', integer],
];

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function merge(base: unknown, over: unknown): unknown {
  if (!isObject(base) || !isObject(over)) return over === undefined ? base : over;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = merge(base[k], v);
  return out;
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let node = target;
  for (let i = 0; i < keys.length - 1; i++) {
    const k = keys[i]!;
    if (!isObject(node[k])) node[k] = {};
    node = node[k] as Record<string, unknown>;
  }
  node[keys[keys.length - 1]!] = value;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

function readConfigFile(path: string): Record<string, unknown> {
  let raw: string;
  try {
    raw = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError([`AFFINITY_CONFIG: cannot read '${path}': ${(err as Error).message}`]);
  }
  try {
    const parsed: unknown = extname(path) === '.json' ? JSON.parse(raw) : parseYaml(raw);
    if (!isObject(parsed)) throw new Error('the top level must be an object');
    return parsed;
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError([`AFFINITY_CONFIG: '${path}' is not valid JSON or YAML: ${(err as Error).message}`]);
  }
}

/** Loads, merges, validates and freezes the configuration. Throws ConfigError when invalid. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  let merged = structuredClone(DEFAULT_CONFIG) as unknown as Record<string, unknown>;
  const file = env.AFFINITY_CONFIG;
  if (file) {
    const fromFile = readConfigFile(file);
    const fileEnvs = fromFile.environments;
    merged = merge(merged, { ...fromFile, environments: undefined }) as Record<string, unknown>;
    // A file that names environments replaces the demo one; each inherits the per-environment defaults.
    if (isObject(fileEnvs)) {
      merged.environments = Object.fromEntries(
        Object.entries(fileEnvs).map(([name, e]) => [name, merge(structuredClone(ENVIRONMENT_DEFAULTS), e)]),
      );
    } else if (fileEnvs !== undefined) {
      merged.environments = fileEnvs;
    }
  }
  const problems: string[] = [];
  for (const [path, name, parse] of ENV_BINDINGS) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    try {
      setPath(merged, path, parse(raw, name));
    } catch (err) {
      problems.push(...(err instanceof ConfigError ? err.problems : [String(err)]));
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  if (!validateConfig(merged)) {
    const errors = validateConfig.errors ?? [];
    throw new ConfigError(
      errors.map((e) => {
        const key = e.instancePath.slice(1).replaceAll('/', '.') || '(root)';
        const extra = e.params && 'additionalProperty' in e.params ? ` '${String(e.params.additionalProperty)}'` : '';
        return `${key} ${e.message ?? 'is invalid'}${extra}`;
      }),
    );
  }
  const config = merged as unknown as Config;
  for (const [name, environment] of Object.entries(config.environments)) {
    for (const [listName, list] of Object.entries(environment.lists)) {
      for (const t of list.itemTypes) {
        if (!environment.itemTypes.includes(t)) {
          problems.push(`environments.${name}.lists.${listName}.itemTypes: '${t}' is not an item type of '${name}'`);
        }
      }
      const strategy = strategyNamed(list.strategy)!;
      const validate = validateOptions.get(list.strategy)!;
      if (!validate(list.options ?? {})) {
        for (const e of validate.errors ?? []) {
          const extra = e.params && 'additionalProperty' in e.params ? ` '${String(e.params.additionalProperty)}' (${list.strategy} takes ${Object.keys(strategy.optionsSchema).join(', ') || 'none'})` : '';
          problems.push(`environments.${name}.lists.${listName}.options${e.instancePath.replaceAll('/', '.')} ${e.message ?? 'is invalid'}${extra}`);
        }
      } else {
        list.options = { ...strategy.defaults, ...list.options };
      }
      if (list.filters === undefined) continue;
      const at = `environments.${name}.lists.${listName}.filters`;
      if (!validateFilters(list.filters)) {
        for (const e of validateFilters.errors ?? []) problems.push(`${at}${e.instancePath.replaceAll('/', '.')} ${e.message ?? 'is invalid'}`);
      } else {
        for (const [field, message] of filterProblems(list.filters, environment.itemTypes, environment.filterAttributes)) problems.push(`${at}.${field.join('.')} ${message}`);
      }
    }
    for (const [feedId, feed] of Object.entries(environment.feeds)) {
      const at = `environments.${name}.feeds.${feedId}`;
      if (feed.interval !== undefined && parseInterval(feed.interval) === undefined) problems.push(`${at}.interval must be from 1s to 30d`);
      const definition = { ...feed, feedId, environment: name, intervalSec: 0 };
      for (const [field, message] of feedDefinitionProblems(definition, environment.itemTypes)) {
        // Problems are named by wire field; the file uses camelCase keys (a mapping's source paths stay as given).
        const [key = '', ...rest] = field;
        const fileKey = [key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()), ...rest].join('.');
        problems.push(`${at}.${fileKey} ${message}`);
      }
    }
    problems.push(...allowListProblems(environment.outbound.allow, `environments.${name}.outbound.allow`));
    const allow = parseAllowList(environment.outbound.allow);
    for (const [feedId, feed] of Object.entries(environment.feeds)) {
      const refusal = literalRefusal(feed.url, allow);
      if (refusal && !/absolute|http or https/.test(refusal)) problems.push(`environments.${name}.feeds.${feedId}.url ${refusal}: add it to environments.${name}.outbound.allow to poll it`);
    }
    const shares = Object.values(environment.controlGroups).reduce((a, b) => a + b, 0);
    if (shares > 1) problems.push(`environments.${name}.controlGroups: shares add up to ${shares}, more than 1`);
  }
  const external = config.auth.external;
  if (external) {
    const entries = external.outbound?.allow ?? [];
    problems.push(...allowListProblems(entries, 'auth.external.outbound.allow'));
    const refusal = literalRefusal(external.jwksUrl, parseAllowList(entries));
    if (refusal) problems.push(`auth.external.jwksUrl ${refusal}: add it to auth.external.outbound.allow to use it`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(config);
}
