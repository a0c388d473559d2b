/**
 * @module ingest/log
 * How ingest code logs: a function the ingest worker binds to a message to the main thread,
 * whose logger writes it (STYLE §6: one logger, made in main.ts). Types only.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFn = (level: LogLevel, fields: Record<string, unknown>, msg: string) => void;
