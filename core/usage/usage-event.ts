import { z } from 'zod';
import { requestIdSchema } from '../errors/index.js';

// One usage event per successful (2xx) call: produced by the API and the tool server,
// parsed by the billing worker. `v` versions the shape; a consumer rejects versions it does
// not know to the dead-letter path rather than guessing.
export const usageEventSchema = z.strictObject({
  v: z.literal(1),
  /** The call's requestId: the idempotency key of the ledger. */
  eventId: requestIdSchema,
  organizationId: z.string().min(1),
  keyId: z.string().min(1),
  source: z.enum(['api', 'mcp']),
  /** Endpoint slug (api) or tool name (mcp). */
  product: z.string().min(1),
  quantity: z.number().int().nonnegative(),
  unit: z.enum(['credits', 'calls']),
  occurredAt: z.iso.datetime(),
});

export type UsageEvent = z.infer<typeof usageEventSchema>;
