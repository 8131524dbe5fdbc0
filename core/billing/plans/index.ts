export { ensurePlan, listPlans, getPlan, MAX_RATE_LIMIT, planDefinitionSchema, type PlanDefinition } from './plan-store.js';
export { ensureDefaultPlans, standardPlan, defaultRateLimits } from './default-plans.js';
export { effectiveProducts, type EffectiveProduct, type PlanProduct, type ProductOverride } from './effective-products.js';
export {
  createOrganization, listOrganizations, getOrganization, findOrganizationId, setOrganizationPlan, setOrganizationLimits,
  setProductOverride, clearProductOverride, applyLimitOverrides, createOrganizationInputSchema,
  type OrganizationSummary, type OrganizationDetails, type LimitOverrides, type AllowanceState, type CreateOrganizationInput,
  type LimitOverridesInput, type ProductOverrideInput,
} from './manage-organizations.js';
export { NAME_TAKEN, nameTakenBy } from './organization-names.js';
export { createEntitlementResolver, type EntitlementResolver, type EntitlementResolverOptions, type OrganizationAccess } from './entitlement-resolver.js';
