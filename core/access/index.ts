export type { AccessControl, Grant, Measure, Principal, ProductKind, RateLimitStatus, UsageUnit } from './access-control.js';
export { createAccessControl, type AccessControlOptions, type AccessControlHandle } from './create-access-control.js';
export { createConfiguredAccessControl, type ConfiguredAccessControl } from './configured-access-control.js';
export { countMalformedAttempt } from './count-malformed-attempt.js';
