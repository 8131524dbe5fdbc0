import type { Knex } from 'knex';
import { metricCatalogue } from './metric-catalogue.js';
import type { CompanyDossier, DossierMetric, MetricCategory } from './schemas/index.js';

interface DefinitionRow {
  slug: string;
  name: string;
  name_it: string | null;
  categories: MetricCategory[];
  unit: string | null;
  display_order: number;
}

/** 'net_working_capital' → 'Net working capital': a readable name for a slug nobody described. */
export function nameFromSlug(slug: string): string {
  const words = slug.replace(/_+/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** A line item's own description of its metric; what an uncatalogued slug is defined by. */
export type MetricDescription = Pick<DossierMetric, 'slug' | 'name' | 'categories' | 'unit'>;

const catalogued = new Set(metricCatalogue.map((m) => m.slug));

/** The dossier's line items whose slug the catalogue does not define, in order. */
export function uncataloguedMetrics(d: CompanyDossier): MetricDescription[] {
  const out: MetricDescription[] = [];
  for (const y of d.years) {
    for (const m of y.metrics) if (!catalogued.has(m.slug)) out.push({ slug: m.slug, name: m.name, categories: m.categories, unit: m.unit });
  }
  return out;
}

/**
 * Keeps metric_definitions in step with what is imported, given the uncatalogued line items
 * of the imported dossiers in order. The catalogue is authoritative for its slugs (a dossier's
 * name for a catalogue slug is ignored, so every company shows the same name). An unknown slug
 * that carries a name, categories or unit defines (or redefines) itself; one that carries
 * nothing gets a name made from the slug, without overwriting a better one. Rows already
 * equal are not rewritten.
 */
export async function upsertMetricDefinitions(trx: Knex.Transaction, metrics: readonly MetricDescription[]): Promise<void> {
  const described = new Map<string, DefinitionRow>();
  const bare = new Map<string, DefinitionRow>();
  const order = metricCatalogue.length;
  for (const m of metrics) {
    if (catalogued.has(m.slug)) continue;
    if (m.name !== undefined || m.categories !== undefined || m.unit !== undefined) {
      described.set(m.slug, { slug: m.slug, name: m.name ?? nameFromSlug(m.slug), name_it: null, categories: m.categories ?? [], unit: m.unit ?? null, display_order: order });
    } else if (!described.has(m.slug)) {
      bare.set(m.slug, { slug: m.slug, name: nameFromSlug(m.slug), name_it: null, categories: [], unit: null, display_order: order });
    }
  }
  for (const slug of described.keys()) bare.delete(slug);
  const authoritative: DefinitionRow[] = [
    ...metricCatalogue.map((m, i) => ({ slug: m.slug, name: m.name, name_it: m.nameIt, categories: m.categories, unit: m.unit, display_order: i })),
    ...described.values(),
  ];
  // In slug order: import batches are written side by side, and two transactions that
  // write the same new slugs in different orders could each wait for the other's row.
  const bySlug = (a: DefinitionRow, b: DefinitionRow) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0);
  await trx.raw(UPSERT_DEFINITIONS_SQL, [JSON.stringify([...bare.values()].sort(bySlug)), JSON.stringify(authoritative.sort(bySlug))]);
}

const COLUMNS = 'slug text, name text, name_it text, categories text[], unit text, display_order smallint';

// Rows already equal are filtered out before the INSERT, not by the WHERE of DO UPDATE: a
// conflicting row is locked even when that WHERE then skips it, and every import batch sends
// the whole catalogue, so concurrent batches would queue behind each other's locks.
const UPSERT_DEFINITIONS_SQL = `
WITH bare AS (
  INSERT INTO metric_definitions (slug, name, name_it, categories, unit, display_order)
  SELECT * FROM json_to_recordset(?::json) AS r(${COLUMNS})
  ON CONFLICT (slug) DO NOTHING
)
INSERT INTO metric_definitions (slug, name, name_it, categories, unit, display_order)
SELECT * FROM json_to_recordset(?::json) AS r(${COLUMNS})
WHERE NOT EXISTS (
  SELECT 1 FROM metric_definitions d
  WHERE d.slug = r.slug AND (d.name, d.name_it, d.categories, d.unit, d.display_order)
    IS NOT DISTINCT FROM (r.name, r.name_it, r.categories, r.unit, r.display_order))
ON CONFLICT (slug) DO UPDATE SET name = excluded.name, name_it = excluded.name_it, categories = excluded.categories,
  unit = excluded.unit, display_order = excluded.display_order
WHERE (metric_definitions.name, metric_definitions.name_it, metric_definitions.categories, metric_definitions.unit, metric_definitions.display_order)
  IS DISTINCT FROM (excluded.name, excluded.name_it, excluded.categories, excluded.unit, excluded.display_order)`;
