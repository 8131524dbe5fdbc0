import type { Knex } from 'knex';
import {
  definitionOf, describes, differingFields, conflictReason, isUndescribed, MetricDefinitionConflict, nameFromSlug,
  type CustomMetricDefinition, type DefinitionSource, type MetricDescription,
} from './custom-metric-definitions.js';
import { metricCatalogue } from './metric-catalogue.js';
import type { CompanyDossier, MetricCategory } from './schemas/index.js';

export { nameFromSlug, type MetricDescription };

interface DefinitionRow {
  slug: string;
  name: string;
  name_it: string | null;
  categories: MetricCategory[];
  unit: string | null;
  display_order: number;
}

const catalogued = new Set(metricCatalogue.map((m) => m.slug));
export const isCatalogued = (slug: string): boolean => catalogued.has(slug);

/** The dossier's line items whose slug the catalogue does not define, in order. */
export function uncataloguedMetrics(d: CompanyDossier): MetricDescription[] {
  const out: MetricDescription[] = [];
  d.years.forEach((y, i) => y.metrics.forEach((m, j) => {
    if (!catalogued.has(m.slug)) out.push({ slug: m.slug, name: m.name, categories: m.categories, unit: m.unit, path: `years[${i}].metrics[${j}]` });
  }));
  return out;
}

/**
 * Keeps metric_definitions in step with what is written, given the uncatalogued line items of
 * the dossiers in order. The catalogue is authoritative for its slugs (a dossier's name for a
 * catalogue slug is ignored, so every company shows the same name). A slug outside it has one
 * definition for every company (custom-metric-definitions.ts): the first item that describes
 * it defines it (an item without a description gets a name made from the slug, which a later
 * description may complete), and an item that describes it otherwise than it is stored throws
 * MetricDefinitionConflict: nothing is redefined. Rows already equal are not rewritten.
 */
export async function upsertMetricDefinitions(trx: Knex.Transaction, metrics: readonly MetricDescription[]): Promise<void> {
  const bare = new Map<string, DefinitionRow>();
  // Per described slug, its first item (what to store when the slug has no definition yet) and every item.
  const described = new Map<string, { first: MetricDescription; all: MetricDescription[] }>();
  const order = metricCatalogue.length;
  for (const m of metrics) {
    if (catalogued.has(m.slug)) continue;
    if (describes(m)) {
      const seen = described.get(m.slug);
      if (seen) seen.all.push(m);
      else described.set(m.slug, { first: m, all: [m] });
    } else if (!bare.has(m.slug)) {
      bare.set(m.slug, { slug: m.slug, name: nameFromSlug(m.slug), name_it: null, categories: [], unit: null, display_order: order });
    }
  }
  for (const slug of described.keys()) bare.delete(slug);
  const catalogue: DefinitionRow[] = metricCatalogue.map((m, i) => ({ slug: m.slug, name: m.name, name_it: m.nameIt, categories: m.categories, unit: m.unit, display_order: i }));
  // In slug order: import batches are written side by side, and two transactions that
  // write the same new slugs in different orders could each wait for the other's row.
  const bySlug = (a: { slug: string }, b: { slug: string }) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0);
  const wanted = [...described.values()].map(({ first }) => ({ slug: first.slug, ...definitionOf(first), display_order: order, bare_name: nameFromSlug(first.slug) })).sort(bySlug);
  const settled = new Map<string, { definition: CustomMetricDefinition; source: DefinitionSource }>();
  const settle = (rows: readonly SettledRow[]): string[] => {
    const unsettled: string[] = [];
    for (const r of rows) {
      const { first } = described.get(r.slug)!;
      const mine = definitionOf(first);
      const stored = r.name === null ? null : { name: r.name, categories: r.categories ?? [], unit: r.unit };
      if (r.written) settled.set(r.slug, { definition: mine, source: { kind: 'item', path: first.path } });
      // A row still undescribed that this statement did not complete differs from ours only
      // when another transaction completed it meanwhile; one not seen was inserted meanwhile.
      else if (stored !== null && (!isUndescribed(r.slug, stored) || sameDefinition(stored, mine))) settled.set(r.slug, { definition: stored, source: { kind: 'store' } });
      else unsettled.push(r.slug);
    }
    return unsettled;
  };
  const { rows } = await trx.raw<{ rows: SettledRow[] }>(UPSERT_DEFINITIONS_SQL, [
    JSON.stringify(catalogue.sort(bySlug)), JSON.stringify([...bare.values()].sort(bySlug)), JSON.stringify(wanted),
  ]);
  // This statement waited for the transaction that inserted or completed an unsettled row to
  // end, so a new statement sees what it stored (or, rolled back, can store its own).
  let unsettled = settle(rows);
  for (let attempt = 1; unsettled.length > 0; attempt++) {
    if (attempt > 3) throw new Error(`the definitions of ${unsettled.join(', ')} kept changing while being written`);
    const again = wanted.filter((w) => unsettled.includes(w.slug));
    unsettled = settle((await trx.raw<{ rows: SettledRow[] }>(UPSERT_DEFINITIONS_SQL, ['[]', '[]', JSON.stringify(again)])).rows);
  }

  for (const [slug, { all }] of described) {
    const { definition, source } = settled.get(slug)!;
    for (const m of all) {
      const fields = differingFields(m, definition);
      if (fields.length > 0) throw new MetricDefinitionConflict(conflictReason(m, fields, definition, source));
    }
  }
}

const sameDefinition = (a: CustomMetricDefinition, b: CustomMetricDefinition) =>
  differingFields({ slug: '', path: '', ...a }, b).length === 0;

/** A described slug after the statement; name null when the row is not visible to it. */
interface SettledRow {
  slug: string;
  name: string | null;
  categories: MetricCategory[] | null;
  unit: string | null;
  written: boolean;
}

const COLUMNS = 'slug text, name text, name_it text, categories text[], unit text, display_order smallint';

// What isUndescribed says, of a stored row d and a wanted row w.
const UNDESCRIBED_SQL = `d.name = w.bare_name AND d.categories = '{}' AND d.unit IS NULL`;

// Catalogue rows already equal are filtered out before the INSERT, not by the WHERE of DO
// UPDATE: a conflicting row is locked even when that WHERE then skips it, and every import
// batch sends the whole catalogue, so concurrent batches would queue behind each other's locks.
// A described slug is inserted when new, or completed when it has only what its slug gives;
// a row described already is never changed by an import, so reading it needs no lock, and
// concurrent batches that agree with it do not queue. An UPDATE that meets a row another
// transaction is changing waits for it and checks its condition again on what it stored, so
// two imports cannot both complete one slug. The last SELECT sees the rows as the statement
// began, beside what it wrote.
const UPSERT_DEFINITIONS_SQL = `
WITH catalogue AS (
  INSERT INTO metric_definitions (slug, name, name_it, categories, unit, display_order)
  SELECT * FROM json_to_recordset(?::json) AS r(${COLUMNS})
  WHERE NOT EXISTS (
    SELECT 1 FROM metric_definitions d
    WHERE d.slug = r.slug AND (d.name, d.name_it, d.categories, d.unit, d.display_order)
      IS NOT DISTINCT FROM (r.name, r.name_it, r.categories, r.unit, r.display_order))
  ON CONFLICT (slug) DO UPDATE SET name = excluded.name, name_it = excluded.name_it, categories = excluded.categories,
    unit = excluded.unit, display_order = excluded.display_order
  WHERE (metric_definitions.name, metric_definitions.name_it, metric_definitions.categories, metric_definitions.unit, metric_definitions.display_order)
    IS DISTINCT FROM (excluded.name, excluded.name_it, excluded.categories, excluded.unit, excluded.display_order)
), bare AS (
  INSERT INTO metric_definitions (slug, name, name_it, categories, unit, display_order)
  SELECT * FROM json_to_recordset(?::json) AS r(${COLUMNS})
  ON CONFLICT (slug) DO NOTHING
), wanted AS (
  SELECT * FROM json_to_recordset(?::json) AS w(slug text, name text, categories text[], unit text, display_order smallint, bare_name text)
), created AS (
  INSERT INTO metric_definitions (slug, name, name_it, categories, unit, display_order)
  SELECT w.slug, w.name, NULL, w.categories, w.unit, w.display_order FROM wanted w
  WHERE NOT EXISTS (SELECT 1 FROM metric_definitions d WHERE d.slug = w.slug)
  ON CONFLICT (slug) DO NOTHING
  RETURNING slug
), completed AS (
  UPDATE metric_definitions d SET name = w.name, categories = w.categories, unit = w.unit
  FROM wanted w
  WHERE d.slug = w.slug AND ${UNDESCRIBED_SQL} AND (d.name, d.categories, d.unit) IS DISTINCT FROM (w.name, w.categories, w.unit)
  RETURNING d.slug
)
SELECT w.slug, d.name, d.categories, d.unit, (c.slug IS NOT NULL OR u.slug IS NOT NULL) AS written
FROM wanted w
LEFT JOIN metric_definitions d ON d.slug = w.slug
LEFT JOIN created c ON c.slug = w.slug
LEFT JOIN completed u ON u.slug = w.slug
ORDER BY w.slug`;
