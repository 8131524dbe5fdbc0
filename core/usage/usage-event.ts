import { z } from 'zod';
import { storable } from '../db/storable-text.js';
import { requestIdSchema } from '../errors/index.js';

/**
 * At most this many credits or calls in one usage event, and so in one price (a plan's or an
 * organization's, which use the same schema: a call priced above it could not be charged).
 * Balances, running balances and report sums are JavaScript numbers (int8 is read as one): exact
 * up to 2^53, which a quantity of that size broke at once (a report said -9007199254741024 for
 * 9007199254740991). Prices are a few credits; at most 10^9 leaves nine million calls at that
 * price before any sum could lose a unit.
 */
export const MAX_USAGE_QUANTITY = 1_000_000_000;

/** A usage quantity or a price: a whole number from 0 to MAX_USAGE_QUANTITY. */
export const usageQuantity = z.number().int().nonnegative().max(MAX_USAGE_QUANTITY, `at most ${MAX_USAGE_QUANTITY}`);

// One usage event per successful (2xx) call: produced by the API and the tool server,
// parsed by the billing worker. `v` versions the shape; a consumer rejects versions it does
// not know to the dead-letter path rather than guessing. Text the ledger could not store as
// written (a NUL, which Postgres refuses in the middle of a batch; an unpaired surrogate, which
// it would keep as U+FFFD) is refused here, with the field named.
export const usageEventSchema = z.strictObject({
  v: z.literal(1),
  /** The call's requestId: the idempotency key of the ledger. */
  eventId: requestIdSchema,
  organizationId: storable(z.string().min(1).max(100)),
  keyId: storable(z.string().min(1).max(100)),
  source: z.enum(['api', 'mcp']),
  /** Endpoint slug (api) or tool name (mcp). */
  product: storable(z.string().min(1).max(100)),
  quantity: usageQuantity,
  unit: z.enum(['credits', 'calls']),
  /** ISO 8601. Our producers write UTC (`Z`), kept as written but for digits past the
   * microsecond, dropped: Postgres would round them, and 23:59:59.9999995 on a month's last day
   * became the next month's first instant in the ledger while the month and day bucket, worked
   * out here, stayed in the old one. A time with an offset is the same instant, rewritten in UTC
   * because the billing month and the daily buckets are UTC. */
  occurredAt: z.iso.datetime({ offset: true }).transform((at) => (at.endsWith('Z') ? at.replace(/(\.\d{6})\d+Z$/, '$1Z') : new Date(at).toISOString())),
});

export type UsageEvent = z.infer<typeof usageEventSchema>;
