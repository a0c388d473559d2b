/**
 * @module ingest/feeds/parsed-feed
 * What every feed format parser returns: Item candidates per entry (with the disable marker's
 * verdict) or the reason an entry cannot become one, and the error for a body that is no feed
 * of its format at all. Types and the error class only.
 */
import type { Candidate } from '../normalize.ts';

export type ParsedEntry =
  | { entry: number; candidate: Candidate; disabled: boolean }
  | { entry: number; itemId?: string; reason: string };

export interface ParsedFeed {
  /** rss2.0, rss1.0, atom1.0, json, xml, csv, ... */
  detectedFormat: string;
  entries: ParsedEntry[];
  warnings: string[];
}

/** The body is not a feed of its format: the poll is an error and the catalog is not touched. */
export class FeedParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FeedParseError';
  }
}
