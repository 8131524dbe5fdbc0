import { errorMessage } from '../errors/index.js';
import type { Logger } from '../logging/index.js';
import type { UsageEvent } from './usage-event.js';

/**
 * Writes a `refused` ledger row for each event (core/billing's recordRefusedCalls), so an event
 * that reaches the bus after its call was refused is not charged, and gives back the charge of
 * any the ledger had already charged; returns the ids refunded.
 */
export type RecordRefusedCalls = (events: UsageEvent[]) => Promise<string[]>;

/**
 * Calls refused (503) whose usage events the bus may still store (sent, not confirmed in time):
 * recorded as refused, so none is charged should it arrive, and any the ledger had already
 * charged refunded. When that cannot be written (or there is no recorder) all of them are logged
 * at error with their ids, to be looked up and refunded by hand.
 */
export async function settleRefusedCalls(events: UsageEvent[], record: RecordRefusedCalls | undefined, logger: Logger, bus: string): Promise<void> {
  if (events.length === 0) return;
  const eventIds = events.map((e) => e.eventId);
  const unsettled = (why: string, ids: string[], err?: unknown) =>
    logger.error(`usage events of calls refused (503) ${why}; any the ${bus} stored will be charged: look them up in the ledger and refund them`, { eventIds: ids, ...(err === undefined ? {} : { err: errorMessage(err) }) });
  if (!record) return unsettled('were not confirmed in time and could not be recorded as refused (no recorder)', eventIds);
  try {
    const refunded = await record(events);
    logger.warn(`usage events sent to the ${bus} were not confirmed before their calls were refused (503): recorded as refused, so none is charged should it arrive`, { eventIds });
    if (refunded.length > 0) logger.warn('usage events of calls refused (503) had been charged before their refusal was recorded: refunded (ledger adjustments)', { eventIds: refunded });
  } catch (err) {
    unsettled('were not confirmed in time, and recording them as refused (or refunding those already charged) failed', eventIds, err);
  }
}
