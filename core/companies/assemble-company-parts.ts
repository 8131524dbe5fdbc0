import type {
  Address, AnnualSnapshot, CompanyBranch, CompanyIdentity, FinancialMetric, Headcount, Holder, Officer, Registry,
  RiskIndicators, StateAids,
} from './schemas/index.js';
import type { BranchJson, CompanyIdentityRow, CompanyRow, HolderJson, OfficerJson, SnapshotJson } from './company-query.js';
import type { MetricDefinitions } from './read-metric-definitions.js';
import { nameFromSlug } from './write-metric-definitions.js';
import { metricChanges, readStoredMetric, storedMetricValues } from './derive-year-figures.js';

// Row → spec objects. Every object is rebuilt field by field (never spread from storage) so
// the response carries exactly the spec's fields, in the spec's order, whatever jsonb holds.

const address = (a: Address | null): Address | null =>
  a === null ? null : { line1: a.line1 ?? null, line2: a.line2 ?? null, locality: a.locality ?? null, postalCode: a.postalCode ?? null, countryCode: a.countryCode };

export function identity(row: CompanyIdentityRow): CompanyIdentity {
  return {
    legalName: row.legal_name,
    legalForm: row.legal_form,
    foundingYear: row.founding_year,
    incorporationDate: row.incorporation_date,
    isQuoted: row.is_quoted,
    vatNumber: row.vat_number,
    fiscalCode: row.fiscal_code,
    naceCode: row.nace_code,
    naceSection: row.nace_section,
    address: address(row.address),
  };
}

export function snapshot(s: SnapshotJson): AnnualSnapshot {
  return { year: s.year, isForecasted: s.isForecasted, size: s.size, statementDate: s.statementDate, employees: s.employees, employeesYoY: s.employeesYoY };
}

export const latest = (row: CompanyIdentityRow): AnnualSnapshot | null => (row.latest === null ? null : snapshot(row.latest));

export function metrics(s: SnapshotJson, previousYear: SnapshotJson | undefined, definitions: MetricDefinitions): FinancialMetric[] {
  const previous = previousYear?.year === s.year - 1 ? storedMetricValues(previousYear.metrics) : undefined;
  return (s.metrics ?? []).map((row) => {
    const m = readStoredMetric(row);
    const def = definitions.get(m.slug);
    const { previousValue, yoyChange } = metricChanges(m, previous);
    return {
      slug: m.slug,
      name: def?.name ?? nameFromSlug(m.slug),
      categories: def?.categories ?? [],
      unit: def?.unit ?? null,
      value: m.value,
      previousValue,
      yoyChange,
      marketValue: m.marketValue ?? null,
      score: m.score ?? null,
    };
  });
}

export const registry = (r: Registry | null): Registry | null => (r === null ? null : { pec: r.pec ?? null, cciaa: r.cciaa ?? null, rea: r.rea ?? null });

export const headcount = (h: Headcount | null): Headcount | null => (h === null ? null : { employees: h.employees, asOf: h.asOf });

export function risk(row: CompanyRow): RiskIndicators {
  return {
    protestsOfBill: row.risk_protests_of_bill,
    insolvencyProceedings: row.risk_insolvency_proceedings,
    insolvencyApplications: row.risk_insolvency_applications,
    assetEncumbrances: row.risk_asset_encumbrances,
    officersWithRiskIndicators: row.risk_officers_with_risk_indicators,
  };
}

export const stateAids = (s: StateAids | null): StateAids | null =>
  s === null ? null : { count: s.count ?? null, countLast36Months: s.countLast36Months ?? null, amount: s.amount ?? null, amountLast36Months: s.amountLast36Months ?? null };

export const holders = (list: HolderJson[] | null, relation: HolderJson['relation']): Holder[] =>
  (list ?? []).filter((h) => h.relation === relation).map((h) => ({ name: h.name, share: h.share }));

export const officers = (list: OfficerJson[] | null): Officer[] => (list ?? []).map((o) => ({ name: o.name, role: o.role, roleCategory: o.roleCategory }));

export const branches = (list: BranchJson[] | null): CompanyBranch[] => (list ?? []).map((b) => ({ legalName: b.legalName, address: address(b.address) }));

export const snapshots = (list: SnapshotJson[] | null): AnnualSnapshot[] => (list ?? []).map(snapshot);
