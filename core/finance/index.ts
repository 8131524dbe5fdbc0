export { allowanceGlance, percentUsed, BURN_WINDOW_DAYS, type AllowanceGlance } from './allowance-glance.js';
export { coverageOf, creditsCoverage, type CreditsCoverage, type CreditPricedProduct } from './credits-coverage.js';
export { ledgerPage, ledgerPeriods, ledgerEntryTypes, type LedgerPage, type LedgerPageRow, type LedgerPosition, type LedgerEntryType } from './ledger-page.js';
export { organizationsOverview, type OrganizationOverviewRow, type OrganizationsOverview } from './organizations-overview.js';
export { setCreditsPerPeriod, organizationPeriodSettings } from './credits-per-period.js';
