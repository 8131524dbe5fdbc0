import type { Db } from '../../db/index.js';

// A bulk load into an EMPTY store builds the trigram (GIN) search indexes once at the end
// instead of updating them row by row. Their definitions are read from the catalogue, so the
// rebuild is exactly what the migrations made.
const TRIGRAM_INDEXES_SQL = `
SELECT indexname, indexdef FROM pg_indexes
WHERE schemaname = current_schema() AND tablename IN ('companies', 'company_holders', 'company_officers')
  AND indexdef LIKE '%gin_trgm_ops%'
ORDER BY indexname`;

export async function withSearchIndexesDeferred<T>(db: Db, load: () => Promise<T>): Promise<T> {
  const empty = await db.raw<{ rows: { any: boolean }[] }>('SELECT EXISTS (SELECT 1 FROM companies) AS any');
  if (empty.rows[0]?.any) return load();
  const { rows: indexes } = await db.raw<{ rows: { indexname: string; indexdef: string }[] }>(TRIGRAM_INDEXES_SQL);
  for (const { indexname } of indexes) await db.raw('DROP INDEX IF EXISTS ??', [indexname]);
  try {
    return await load();
  } finally {
    for (const { indexdef } of indexes) await db.raw(indexdef.replace(/^CREATE INDEX /, 'CREATE INDEX IF NOT EXISTS '));
  }
}
