// STUB: the sample-data work replaces this with the full art. 2424 / 2425 catalogue.
export interface MetricDefinition {
  slug: string;
  name: string;
  nameIt: string;
  categories: string[];
  unit: string | null;
}

export const metricCatalogue: MetricDefinition[] = [
  { slug: 'revenue', name: 'Revenue from sales and services', nameIt: 'Ricavi delle vendite e delle prestazioni', categories: ['income_statement', 'revenue'], unit: 'EUR' },
  { slug: 'total_assets', name: 'Total assets', nameIt: 'Totale attivo', categories: ['balance_sheet', 'assets'], unit: 'EUR' },
];
