import type { Measure } from '../../core/access/index.js';
import { endpointCatalogue, type CompanyLookups, type Language } from '../../core/companies/endpoint-catalogue.js';
import type { Logger } from '../../core/logging/index.js';
import { buildComponentSchemas, type JsonSchema } from './component-schemas.js';
import { buildOpenApiDocument, type CompanyExample } from './build-document.js';

export interface OpenApiDocumentsOptions {
  store: CompanyLookups;
  /**
   * A fiscal code of a real company in the store, for the examples; null when the store is
   * empty. Asked with 'large' for a large company, whose profile is the `peerCount` + `peers`
   * branch: the second example of the profile. An answer whose profile is not that branch is
   * not used, so a finder that ignores the argument only leaves that example out.
   */
  findExampleCompany(kind?: 'large'): Promise<string | null>;
  serverUrl: string;
  logger: Logger;
}

export interface OpenApiDocuments {
  /** A key's own document: only its organization's endpoints, with its measures. */
  forOrganization(language: Language, entitlements: Map<string, Measure>): Promise<Record<string, unknown>>;
  /** The whole catalogue with default measures (the /docs page). */
  catalogue(language: Language): Promise<Record<string, unknown>>;
}

const maxCachedDocuments = 200;

// Documents differ only by language and by the organization's (endpoint, measure) set, which
// repeats across all the organizations of a plan; they are cached under that signature. The
// examples are fetched from the store once it holds a company and reused by every document.
export function createOpenApiDocuments(options: OpenApiDocumentsOptions): OpenApiDocuments {
  const components = new Map<Language, Record<string, JsonSchema>>();
  let example: CompanyExample | undefined;
  const cache = new Map<string, Record<string, unknown>>();

  async function loadExample(): Promise<CompanyExample | null> {
    if (example) return example;
    try {
      const id = await options.findExampleCompany();
      if (id === null) return null;
      const data = new Map<string, unknown>();
      for (const endpoint of endpointCatalogue) {
        const value = await options.store[endpoint.lookupName](id);
        if (value !== null) data.set(endpoint.slug, value);
      }
      const largeId = await options.findExampleCompany('large');
      const largeProfile = largeId === null ? null : await options.store.companyProfile(largeId);
      example = { id, data, largeProfile: largeId !== null && largeProfile !== null && 'peers' in largeProfile ? { id: largeId, data: largeProfile } : null };
      return example;
    } catch (err) {
      // Documentation without examples beats no documentation; try again next time.
      options.logger.warn('could not load OpenAPI examples', { err });
      return null;
    }
  }

  async function build(language: Language, entries: { slug: string; measure: Measure }[], forOrganization: boolean) {
    const signature = `${language}|${forOrganization}|${entries.map((e) => `${e.slug}:${e.measure.quantity}:${e.measure.unit}`).join(',')}`;
    const cached = cache.get(signature);
    if (cached) return cached;
    const currentExample = await loadExample();
    const languageComponents = components.get(language) ?? buildComponentSchemas(language);
    components.set(language, languageComponents);
    const document = buildOpenApiDocument({
      language,
      serverUrl: options.serverUrl,
      components: languageComponents,
      example: currentExample,
      forOrganization,
      endpoints: entries.flatMap(({ slug, measure }) => {
        const endpoint = endpointCatalogue.find((e) => e.slug === slug);
        return endpoint ? [{ endpoint, measure }] : [];
      }),
    });
    if (currentExample) {
      if (cache.size >= maxCachedDocuments) cache.delete(cache.keys().next().value as string);
      cache.set(signature, document);
    }
    return document;
  }

  return {
    forOrganization: (language, entitlements) =>
      build(
        language,
        endpointCatalogue.filter((e) => entitlements.has(e.slug)).map((e) => ({ slug: e.slug, measure: entitlements.get(e.slug)! })),
        true,
      ),
    catalogue: (language) => build(language, endpointCatalogue.map((e) => ({ slug: e.slug, measure: e.defaultMeasure })), false),
  };
}
