export type { AccessControl, Grant, Measure, Principal, ProductKind, RateLimitStatus, UsageUnit } from './access-control.js';
