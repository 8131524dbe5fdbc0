import type { Measure, ProductKind } from '../access/access-control.js';

// The product catalogue: every billable API endpoint and MCP tool with its default measure
// (spec "Limits" 4 for the endpoints). The API, the tool server, the OpenAPI generator and the
// default plan all read this one list.
export interface Product {
  slug: string;
  kind: ProductKind;
  defaultMeasure: Measure;
}

export const productCatalogue = [
  { slug: 'company-report', kind: 'endpoint', defaultMeasure: { quantity: 1, unit: 'calls' } },
  { slug: 'company-credit-report', kind: 'endpoint', defaultMeasure: { quantity: 10, unit: 'credits' } },
  { slug: 'company-profile', kind: 'endpoint', defaultMeasure: { quantity: 8, unit: 'credits' } },
  { slug: 'company-financials', kind: 'endpoint', defaultMeasure: { quantity: 5, unit: 'credits' } },
  { slug: 'service_search_companies', kind: 'tool', defaultMeasure: { quantity: 1, unit: 'credits' } },
  { slug: 'service_search_people', kind: 'tool', defaultMeasure: { quantity: 1, unit: 'credits' } },
  { slug: 'service_get_company_profile', kind: 'tool', defaultMeasure: { quantity: 8, unit: 'credits' } },
  { slug: 'service_get_company_structure', kind: 'tool', defaultMeasure: { quantity: 5, unit: 'credits' } },
  { slug: 'service_get_company_metrics', kind: 'tool', defaultMeasure: { quantity: 5, unit: 'credits' } },
  { slug: 'service_analyze_company', kind: 'tool', defaultMeasure: { quantity: 10, unit: 'credits' } },
] as const satisfies readonly Product[];

export type ProductSlug = (typeof productCatalogue)[number]['slug'];
export type EndpointSlug = Extract<(typeof productCatalogue)[number], { kind: 'endpoint' }>['slug'];
export type ToolName = Extract<(typeof productCatalogue)[number], { kind: 'tool' }>['slug'];

export function findProduct(slug: string): Product | undefined {
  return productCatalogue.find((p) => p.slug === slug);
}
