import type { MetricCategory } from './schemas/index.js';

export interface MetricDefinitionView {
  name: string;
  categories: MetricCategory[];
  unit: string | null;
}

export type MetricDefinitions = ReadonlyMap<string, MetricDefinitionView>;

export interface MetricDefinitionCache {
  /** Loads on first use; afterwards served from memory. */
  get(): Promise<MetricDefinitions>;
  /**
   * For a report that names a slug the cache lacks (imported after the load): reloads, at
   * most once per `minReloadIntervalMs` so a slug missing for good cannot cause a reload storm.
   */
  refreshForMissing(): Promise<MetricDefinitions>;
  reload(): Promise<MetricDefinitions>;
  /** Drops what is held: the next use loads again (an import changed names, units or categories). */
  forget(): void;
}

export interface MetricDefinitionRow {
  slug: string;
  name: string;
  categories: MetricCategory[];
  unit: string | null;
}

export function createMetricDefinitionCache(load: () => Promise<MetricDefinitionRow[]>, minReloadIntervalMs = 5_000): MetricDefinitionCache {
  let current: Promise<MetricDefinitions> | undefined;
  let loadedAt = 0;

  const reload = (): Promise<MetricDefinitions> => {
    loadedAt = Date.now();
    const pending = load().then((rows) => new Map(rows.map((r) => [r.slug, { name: r.name, categories: r.categories, unit: r.unit }])));
    // A failed load is not cached: the next call tries again.
    pending.catch(() => { if (current === pending) current = undefined; });
    current = pending;
    return pending;
  };

  return {
    get: () => current ?? reload(),
    refreshForMissing: () => (current && Date.now() - loadedAt < minReloadIntervalMs ? current : reload()),
    reload,
    forget: () => {
      current = undefined;
    },
  };
}
