import type { ProductKind } from '../access/access-control.js';
import { EFFECTIVE_PRODUCTS_BINDING, EFFECTIVE_PRODUCTS_SQL } from '../billing/plans/effective-products.js';
import { productCatalogue } from '../billing/products.js';
import { getOrganization, type OrganizationDetails } from '../billing/plans/manage-organizations.js';
import type { Db } from '../db/index.js';

export interface CreditPricedProduct {
  product: string;
  kind: ProductKind;
  /** Credits per call (positive). */
  credits: number;
}

export interface CreditsCoverage {
  /** The organization's credits-priced products the balance pays for, and those it no longer does, dearest first. */
  payable: CreditPricedProduct[];
  refused: CreditPricedProduct[];
  /** Credits to add so that every one of them is paid again; 0 when they all are. */
  shortfall: number;
}

/**
 * Which of the organization's credits-priced products a balance still pays for. The API and the
 * tool server refuse a call whose price is above the balance (402 credits_exhausted) whether or
 * not the flag is up: the flag says only that not even the cheapest can be paid
 * (docs/billing.md), so with 4 credits and a 1-credit search tool it stays down while every
 * 5-, 8- and 10-credit call is refused. The products are the plan's with the organization's
 * overrides, resolved as the access control resolves them; free ones (0 credits) and
 * call-priced ones are never refused for credits and are left out.
 */
export async function creditsCoverage(db: Db, organizationId: string, balance: number): Promise<CreditsCoverage> {
  // The organization's products as its operator page and the access control see them.
  return coverageOf((await getOrganization(db, organizationId)).products, balance);
}

/** The same, of products already read (getOrganization's). */
export function coverageOf(products: OrganizationDetails['products'], balance: number): CreditsCoverage {
  const priced: CreditPricedProduct[] = [...products]
    .filter(([, p]) => p.measure.unit === 'credits' && p.measure.quantity > 0)
    .map(([product, p]) => ({ product, kind: p.kind, credits: p.measure.quantity }))
    .sort((a, b) => b.credits - a.credits || (a.product < b.product ? -1 : a.product > b.product ? 1 : 0));
  const refused = priced.filter((p) => p.credits > balance);
  return {
    payable: priced.filter((p) => p.credits <= balance),
    refused,
    shortfall: refused.length === 0 ? 0 : refused[0]!.credits - balance,
  };
}

/**
 * coverageOf's "some refused" in SQL, for the organization aliased `o` and the balance `balance`
 * (an SQL expression): whether one of its credits-priced products costs more than the balance.
 * For a count over every organization in one statement; a page of them reads their products and
 * asks coverageOf, and the two agree (test/dashboard-operator.test.ts).
 */
export function someProductsRefusedSql(balance: string): { sql: string; bindings: (string | number)[] } {
  // A balance at or above every price there is (of any plan, override or catalogue default;
  // read once per statement) pays for everything: most organizations are let off without their
  // products being resolved, which over 20,000 organizations with low balances took ~0.2 s.
  return {
    sql: `(${balance} < (SELECT GREATEST((SELECT MAX(quantity) FROM plan_entitlements), (SELECT MAX(quantity) FROM organization_overrides), ?::bigint))
           AND EXISTS (SELECT 1 FROM ${EFFECTIVE_PRODUCTS_SQL} AS p WHERE p.unit = 'credits' AND p.quantity > 0 AND p.quantity > ${balance}))`,
    bindings: [Math.max(...productCatalogue.map((p) => p.defaultMeasure.quantity)), EFFECTIVE_PRODUCTS_BINDING],
  };
}
