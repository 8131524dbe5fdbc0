import type { Db } from '../db/index.js';
import type { Logger } from '../logging/index.js';
import { parseDossierValue, writeDossiers, type ImportSummary, type ParsedEntry } from '../companies/import/index.js';
import { generateDossiers } from './generate-dossiers.js';

export interface EnsureSampleDataOptions {
  db: Db;
  count: number;
  seed: number;
  logger: Logger;
  batchSize?: number;
}

export interface EnsureSampleDataResult {
  /** False when the store already had companies (nothing was generated). */
  loaded: boolean;
  summary: ImportSummary | null;
}

/**
 * Loads `count` synthetic companies when the company store is empty, in process (no file):
 * the same generator and the same batch writer as `cli sample generate | cli import`.
 * A store with any company, sample or real, is left alone, so a restart never re-imports.
 */
export async function ensureSampleData(options: EnsureSampleDataOptions): Promise<EnsureSampleDataResult> {
  const { db, count, seed, logger } = options;
  const existing = await db.raw<{ rows: { any: boolean }[] }>('SELECT EXISTS (SELECT 1 FROM companies) AS any');
  if (existing.rows[0]?.any || count === 0) return { loaded: false, summary: null };

  logger.info('loading sample companies', { count, seed });
  function* entries(): Generator<ParsedEntry> {
    let line = 0;
    // Validated like any import: a generator bug shows up as rejections, not as bad responses.
    for (const dossier of generateDossiers({ count, seed, includeDerivedChanges: false })) yield parseDossierValue(dossier, ++line);
  }
  const summary = await writeDossiers(entries(), { db, batchSize: options.batchSize });
  const rate = Math.round((summary.accepted / Math.max(1, summary.durationMs)) * 1000);
  logger.info('sample companies loaded', { created: summary.created, rejected: summary.rejected, durationMs: summary.durationMs, perSecond: rate });
  if (summary.rejected > 0) logger.warn('sample companies rejected', { first: summary.rejections.slice(0, 5) });
  return { loaded: true, summary };
}
