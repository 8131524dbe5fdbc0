import type { Measure, ProductKind } from '../../access/access-control.js';
import { findProduct, productCatalogue } from '../products.js';

export interface PlanProduct {
  product: string;
  kind: ProductKind;
  quantity: number;
  unit: Measure['unit'];
}

export interface ProductOverride {
  product: string;
  kind: ProductKind;
  enabled: boolean;
  quantity: number | null;
  unit: Measure['unit'] | null;
}

// The plan's products and the organization's overrides of the organization aliased `o`, as JSON
// columns in the shapes effectiveProducts takes: read with the organization's row in one
// statement, by the access control for one organization and by the operators' list for a page.
export const PLAN_PRODUCTS_JSON = `COALESCE((SELECT json_agg(json_build_object('product', e.product, 'kind', e.product_kind, 'quantity', e.quantity, 'unit', e.unit))
                     FROM plan_entitlements e WHERE e.plan_id = o.plan_id), '[]')`;
export const OVERRIDES_JSON = `COALESCE((SELECT json_agg(json_build_object('product', v.product, 'kind', v.product_kind, 'enabled', v.enabled, 'quantity', v.quantity, 'unit', v.unit))
                     FROM organization_overrides v WHERE v.organization_id = o.id), '[]')`;

/**
 * effectiveProducts in SQL: the products (columns product, quantity, unit) of the organization
 * aliased `o`, for a statement over every organization, whose products cannot each be read into
 * JavaScript (the operators' totals). Its one binding is EFFECTIVE_PRODUCTS_BINDING: the
 * catalogue's default measures, which an enabled override without a measure of its own falls
 * back on for a product its plan lacks. A plan's rows always have both parts of their measure.
 */
export const EFFECTIVE_PRODUCTS_SQL = `(
  SELECT e.product, e.quantity, e.unit FROM plan_entitlements e
   WHERE e.plan_id = o.plan_id
     AND NOT EXISTS (SELECT 1 FROM organization_overrides v WHERE v.organization_id = o.id AND v.product = e.product)
  UNION ALL
  SELECT v.product, COALESCE(v.quantity, e.quantity, d.quantity), COALESCE(v.unit, e.unit, d.unit)
    FROM organization_overrides v
    LEFT JOIN plan_entitlements e ON e.plan_id = o.plan_id AND e.product = v.product
    LEFT JOIN jsonb_to_recordset(?::jsonb) AS d(product text, quantity bigint, unit text) ON d.product = v.product
   WHERE v.organization_id = o.id AND v.enabled
)`;
export const EFFECTIVE_PRODUCTS_BINDING = JSON.stringify(productCatalogue.map((p) => ({ product: p.slug, ...p.defaultMeasure })));

export interface EffectiveProduct {
  kind: ProductKind;
  measure: Measure;
}

/**
 * The plan's products with the organization's overrides applied (migration 002): a disabled
 * override removes a product; an enabled one adds it or replaces its measure, a null field
 * keeping the plan's value (or the catalogue default for a product the plan lacks).
 */
export function effectiveProducts(plan: PlanProduct[], overrides: ProductOverride[]): Map<string, EffectiveProduct> {
  const products = new Map<string, EffectiveProduct>();
  for (const p of plan) products.set(p.product, { kind: p.kind, measure: { quantity: p.quantity, unit: p.unit } });
  for (const o of overrides) {
    if (!o.enabled) {
      products.delete(o.product);
      continue;
    }
    const base = products.get(o.product)?.measure ?? findProduct(o.product)?.defaultMeasure;
    const quantity = o.quantity ?? base?.quantity;
    const unit = o.unit ?? base?.unit;
    // An override for a product we know nothing of, without a full measure, grants nothing.
    if (quantity === undefined || unit === undefined) continue;
    products.set(o.product, { kind: o.kind, measure: { quantity, unit } });
  }
  return products;
}
