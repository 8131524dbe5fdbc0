import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Db } from '../db/index.js';
import { isAppError } from '../errors/index.js';
import { createLogger } from '../logging/index.js';
import { createPostgresUsageSink } from './postgres-usage-sink.js';
import type { UsageEvent } from './usage-event.js';

// The sink's deadline against a pool that hands out no connection in time, with the clock in
// the test's hands: the cases between "waiting" and "refused" are a matter of milliseconds.
afterEach(() => {
  vi.useRealTimers();
});

const event = (n: number): UsageEvent => ({
  v: 1, eventId: `req_00000000-0000-4000-8000-00000000000${n}`, organizationId: 'org_deadline', keyId: 'key_deadline', source: 'api',
  product: 'company-financials', quantity: 5, unit: 'credits', occurredAt: new Date(0).toISOString(),
});

describe('the Postgres usage sink at its deadline', () => {
  it('when a connection comes free only after the deadline has passed then nothing is written and the caller is refused, not served', async () => {
    vi.useFakeTimers();
    let handOut!: (connection: unknown) => void;
    const written: unknown[] = [];
    const connection = { processID: 1, query: async (q: unknown) => void written.push(q) };
    const db = {
      client: { acquireConnection: () => new Promise((resolve) => (handOut = resolve)), releaseConnection: async () => {} },
      raw: async () => ({ rows: [] }),
    } as unknown as Db;
    const errors: string[] = [];
    const logger = createLogger({ level: 'error', write: (line) => errors.push(line) });
    const sink = createPostgresUsageSink(db, { deadlineMs: 40, logger });

    const outcome = sink.publish(event(1)).then(() => 'served', (err: unknown) => (isAppError(err) ? err.code : String(err)));
    await vi.advanceTimersByTimeAsync(45); // the batch waits for a connection; its deadline passes
    handOut(connection); // one comes free before the next sweep would refuse the caller
    await vi.advanceTimersByTimeAsync(30);
    expect(await outcome).toBe('entitlement_unavailable');
    expect(written).toEqual([]);
    expect(errors).toEqual([]); // nothing was written, so nothing is to be refunded
  });
});
