// The company module's public surface: what the API, the tool server and the CLI use.
export { createCompanyStore, lookupKeys, type CompanyStore, type CompanyStoreOptions } from './company-store.js';
export { createCompanyCache, COMPANIES_CHANGED_CHANNEL, type CompanyCache, type CompanyCacheOptions } from './company-cache.js';
export { upsertCompanies, type UpsertResult } from './write-companies.js';
export { classifyCompanySize, isLargeCompany, type CompanySize } from './company-size.js';
export { metricCatalogue, type MetricDefinition } from './metric-catalogue.js';
export * from './schemas/index.js';
export { createConfiguredCompanyStore, type ConfiguredCompanyStore } from './configured-company-store.js';
