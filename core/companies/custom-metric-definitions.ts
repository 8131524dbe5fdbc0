import type { DossierMetric, MetricCategory } from './schemas/index.js';

// A slug the catalogue does not define has one definition (name, categories, unit) for every
// company that reports it. The first line that describes it defines it; a line that describes
// it otherwise is refused rather than redefining the metric of every other company (which the
// API would then serve, e.g., euros as a ratio). A line that leaves the description out, or
// gives part of it, takes the definition as it is.

/** A line item's own description of a metric outside the catalogue, and where it is in its dossier. */
export interface MetricDescription extends Pick<DossierMetric, 'slug' | 'name' | 'categories' | 'unit'> {
  /** `years[1].metrics[4]`: the item in the dossier as given. */
  path: string;
  /**
   * What to store when the slug has no definition yet: set by the importer to the definition
   * the import has settled on (by an earlier line), so that batches written side by side, in
   * any order, store the same one. Otherwise the item's own, see definitionOf.
   */
  definition?: CustomMetricDefinition;
}

export interface CustomMetricDefinition {
  name: string;
  categories: MetricCategory[];
  unit: string | null;
}

const FIELDS = ['name', 'categories', 'unit'] as const;
type Field = (typeof FIELDS)[number];

/** 'net_working_capital' → 'Net working capital': a readable name for a slug nobody described. */
export function nameFromSlug(slug: string): string {
  const words = slug.replace(/_+/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

export const describes = (m: MetricDescription): boolean => m.name !== undefined || m.categories !== undefined || m.unit !== undefined;

/** What a first description defines: what it leaves out is what the slug alone gives. */
export const definitionOf = (m: MetricDescription): CustomMetricDefinition =>
  m.definition ?? { name: m.name ?? nameFromSlug(m.slug), categories: m.categories ?? [], unit: m.unit ?? null };

/**
 * Nothing beyond what the slug gives (a line that reported it without a description made it):
 * the first line that describes the slug may still define it. Also as SQL, UNDESCRIBED_SQL.
 */
export const isUndescribed = (slug: string, d: CustomMetricDefinition): boolean => d.name === nameFromSlug(slug) && d.categories.length === 0 && d.unit === null;

// Categories are a set: the same ones in another order describe the same metric.
const sameCategories = (a: readonly string[], b: readonly string[]) => {
  const x = new Set(a);
  const y = new Set(b);
  return x.size === y.size && [...x].every((c) => y.has(c));
};

/** The fields the item gives that differ from the definition (none: it agrees with it). */
export function differingFields(m: MetricDescription, d: CustomMetricDefinition): Field[] {
  const out: Field[] = [];
  if (m.name !== undefined && m.name !== d.name) out.push('name');
  if (m.categories !== undefined && !sameCategories(m.categories, d.categories)) out.push('categories');
  if (m.unit !== undefined && m.unit !== d.unit) out.push('unit');
  return out;
}

/** Where a definition came from, as a rejection names it. */
export type DefinitionSource = { kind: 'store' } | { kind: 'line'; line: number } | { kind: 'item'; path: string };

const fieldText = (field: Field, value: unknown) => `${field} ${JSON.stringify(value)}`;

/**
 * The reason a line is refused, naming each field that differs, e.g. `years[0].metrics[1].unit:
 * green_capex is already defined by line 1 as name "Green capex", categories ["assets"], unit
 * "EUR", not unit "ratio"; use the same name, categories and unit as line 1, leave them out,
 * or use another slug`.
 */
export function conflictReason(m: MetricDescription, fields: readonly Field[], d: CustomMetricDefinition, source: DefinitionSource): string {
  const [by, as] = source.kind === 'store' ? ['in the store', 'the stored definition']
    : source.kind === 'line' ? [`by line ${source.line}`, `line ${source.line}`]
    : [`by ${source.path} of this line`, source.path];
  const defined = FIELDS.map((f) => fieldText(f, d[f])).join(', ');
  const given = fields.map((f) => fieldText(f, m[f])).join(', ');
  return `${fields.map((f) => `${m.path}.${f}`).join(', ')}: ${m.slug} is already defined ${by} as ${defined}, not ${given}; `
    + `use the same name, categories and unit as ${as}, leave them out, or use another slug`;
}

/**
 * A company the writer refused because it describes a metric otherwise than the stored
 * definition (one another import stored meanwhile). Its message is the rejection's reason.
 */
export class MetricDefinitionConflict extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'MetricDefinitionConflict';
  }
}
