import {
  conflictReason, definitionOf, describes, differingFields, isUndescribed,
  type CustomMetricDefinition, type DefinitionSource, type MetricDescription,
} from '../custom-metric-definitions.js';
import type { PreparedCompany } from '../write-companies.js';

// The importer's side of "one definition per custom slug" (custom-metric-definitions.ts): each
// line is checked, in line order, against the definitions stored when the import first needed
// them (read once: no round trip per line) and those its earlier lines gave. Batches are
// written side by side and out of line order, so a line that agrees carries the definition
// the import settled on, and whichever batch lands first stores that same one. The writer
// checks again at write time (upsertMetricDefinitions) for what another import stored
// meanwhile.

export interface StoredMetricDefinition extends CustomMetricDefinition {
  slug: string;
}

export type DefinitionVerdict = { ok: true; company: PreparedCompany } | { ok: false; reason: string };

export type CheckMetricDefinitions = (line: number, company: PreparedCompany) => Promise<DefinitionVerdict>;

const MAX_CONFLICTS = 5;

interface Known {
  definition: CustomMetricDefinition;
  source: DefinitionSource;
}

/** One per import: it remembers what the lines it accepted defined. Call it in line order. */
export function checkMetricDefinitions(loadStored: () => Promise<StoredMetricDefinition[]>): CheckMetricDefinitions {
  let known: Promise<Map<string, Known>> | undefined;
  const load = async () => {
    const map = new Map<string, Known>();
    for (const d of await loadStored()) {
      const definition = { name: d.name, categories: d.categories, unit: d.unit };
      if (!isUndescribed(d.slug, definition)) map.set(d.slug, { definition, source: { kind: 'store' } });
    }
    return map;
  };

  return async (line, company) => {
    // Most lines describe no metric outside the catalogue: they never read the definitions.
    if (!company.definitions.some(describes)) return { ok: true, company };
    if (known === undefined) {
      known = load();
      // A failed read is not kept: the import stops with it, or a later line tries again.
      known.catch(() => (known = undefined));
    }
    const defined = await known;
    const own = new Map<string, Known>();
    const conflicts: string[] = [];
    const definitions = company.definitions.map((m): MetricDescription => {
      if (!describes(m)) return m;
      const earlier = own.get(m.slug) ?? defined.get(m.slug);
      if (earlier === undefined) {
        const definition = definitionOf(m);
        if (!isUndescribed(m.slug, definition)) own.set(m.slug, { definition, source: { kind: 'item', path: m.path } });
        return { ...m, definition };
      }
      const fields = differingFields(m, earlier.definition);
      if (fields.length > 0) conflicts.push(conflictReason(m, fields, earlier.definition, earlier.source));
      return { ...m, definition: earlier.definition };
    });
    if (conflicts.length > 0) {
      const shown = conflicts.slice(0, MAX_CONFLICTS);
      if (conflicts.length > MAX_CONFLICTS) shown.push(`… and ${conflicts.length - MAX_CONFLICTS} more`);
      return { ok: false, reason: shown.join('; ') };
    }
    for (const [slug, { definition }] of own) defined.set(slug, { definition, source: { kind: 'line', line } });
    return { ok: true, company: { ...company, definitions } };
  };
}
