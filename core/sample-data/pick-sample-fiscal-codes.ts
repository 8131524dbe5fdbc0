import type { Db } from '../db/index.js';

// Codes to show a newcomer (demo.json, `cli sample codes`): a mix that exercises every shape of
// the API: 11-digit and 16-character codes, large companies (profile with peers) and smaller
// ones (profile with risk), a company in an ownership chain. Active companies with filed
// accounts first; the order is stable so the same store always suggests the same codes.
const PICK_SQL = `
WITH ranked AS (
  SELECT c.fiscal_code, c.id,
    CASE
      WHEN length(c.fiscal_code) = 16 THEN 'person'
      WHEN c.size = 'large' THEN 'large'
      WHEN EXISTS (SELECT 1 FROM company_holders h WHERE h.company_id = c.id AND h.relation = 'shareholder' AND h.related_company_id IS NOT NULL) THEN 'group'
      ELSE coalesce(c.size, 'unknown')
    END AS kind,
    (c.dissolution_year IS NULL AND c.latest_filed_year IS NOT NULL) AS active
  FROM companies c
), numbered AS (
  SELECT fiscal_code, kind, row_number() OVER (PARTITION BY kind ORDER BY active DESC, id) AS n FROM ranked
)
SELECT fiscal_code, kind FROM numbered WHERE n <= ? ORDER BY n, kind`;

export async function pickSampleFiscalCodes(db: Db, n = 24): Promise<string[]> {
  const { rows } = await db.raw<{ rows: { fiscal_code: string; kind: string }[] }>(PICK_SQL, [n]);
  // Round-robin over kinds (rows come ordered by rank within kind), so any n mixes them all.
  return rows.slice(0, n).map((r) => r.fiscal_code);
}
