import { errorMessage } from '../errors/index.js';
import type { Logger } from '../logging/index.js';
import type { UsageEvent } from './usage-event.js';

/**
 * Writes a `refused` ledger row for each event (core/billing's recordRefusedCalls), so an event
 * that reaches the bus after its call was refused is not charged; returns the ids the ledger
 * had already charged.
 */
export type RecordRefusedCalls = (events: UsageEvent[]) => Promise<string[]>;

/**
 * Calls refused (503) whose usage events the bus may still store (sent, not confirmed in time):
 * recorded as refused, so none is charged should it arrive. Those the ledger had already
 * charged, and all of them when the record cannot be written (or there is no recorder), are
 * logged at error with their ids, to be refunded.
 */
export async function settleRefusedCalls(events: UsageEvent[], record: RecordRefusedCalls | undefined, logger: Logger, bus: string): Promise<void> {
  if (events.length === 0) return;
  const eventIds = events.map((e) => e.eventId);
  const unsettled = (why: string, ids: string[], err?: unknown) =>
    logger.error(`usage events of calls refused (503) ${why}; any the ${bus} stored will be charged: look them up in the ledger and refund them`, { eventIds: ids, ...(err === undefined ? {} : { err: errorMessage(err) }) });
  if (!record) return unsettled('were not confirmed in time and could not be recorded as refused (no recorder)', eventIds);
  try {
    const charged = await record(events);
    logger.warn(`usage events sent to the ${bus} were not confirmed before their calls were refused (503): recorded as refused, so none is charged should it arrive`, { eventIds });
    if (charged.length > 0) logger.error('usage events of calls refused (503) were charged before their refusal could be recorded: refund them', { eventIds: charged });
  } catch (err) {
    unsettled('were not confirmed in time, and recording them as refused failed', eventIds, err);
  }
}
