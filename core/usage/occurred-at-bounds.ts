// When a usage event may say it happened, against the billing worker's clock. The event's time
// picks the billing month it is charged in, and a month ahead of ours rolls the organization over
// to it (a grant per month skipped, the calls cap of the month we are in never counted). So an
// event from the future is not charged: it is a dead letter until its time has come (a replay
// then charges it in its own month: the billing worker's own, for an event at most a day ahead,
// core/billing/replay-due-dead-letters.ts; an operator's, further ahead). One rule for both
// buses: parseUsageMessage applies it for applyUsageBatch, which the Kafka consumer, the Postgres
// consumer and dead-letter replay share.

/** How far ahead of the worker's clock an event may be: producers' clocks drift a little (NTP
 * keeps hosts within milliseconds; minutes means a clock not synchronised at all). */
export const MAX_CLOCK_SKEW_MS = 5 * 60_000;

/** No call of this service happened before this: an earlier time is a producer's clock reset to
 * its epoch (1970), a default date (0001-01-01) or a bug, not a late event. Late events (a bus
 * down for days, a replay weeks later) are years after it and are charged in their own month. */
export const EARLIEST_OCCURRED_AT = '2000-01-01T00:00:00.000Z';
const EARLIEST_MS = Date.parse(EARLIEST_OCCURRED_AT);

/** How far ahead an event may be for the worker to charge it by itself once its time comes: a
 * clock hours off (a time zone taken for UTC) mends itself; one days or years off is most likely
 * not the time of any call, and waits for an operator, who can see it among the open dead letters. */
export const SELF_REPLAY_MAX_LEAD_MS = 24 * 3_600_000;

/** Why an event's time cannot be charged now, and when it can be by the worker itself (null: it
 * cannot, or only by an operator's replay). */
export interface OccurredAtRefusal {
  reason: string;
  replayAfter: Date | null;
}

const minutes = (ms: number) => `${Math.round(ms / 60_000)} min`;

/** How far ahead, in words a person reads: minutes, hours or days. */
function ahead(ms: number): string {
  if (ms < 2 * 3_600_000) return minutes(ms);
  if (ms < 2 * 86_400_000) return `${Math.round(ms / 3_600_000)} h`;
  return `${Math.round(ms / 86_400_000)} days`;
}

/**
 * Why an event's `occurredAt` cannot be charged at `now`, or null when it can: ahead of the
 * worker's clock by more than MAX_CLOCK_SKEW_MS, or before EARLIEST_OCCURRED_AT. An event at most
 * SELF_REPLAY_MAX_LEAD_MS ahead can be charged from MAX_CLOCK_SKEW_MS before its time.
 */
export function occurredAtRefusal(occurredAt: string, now: Date): OccurredAtRefusal | null {
  const at = Date.parse(occurredAt);
  const lead = at - now.getTime();
  if (lead > MAX_CLOCK_SKEW_MS) {
    const said = `occurredAt ${occurredAt} is ${ahead(lead)} ahead of the billing worker's clock (${now.toISOString()}), more than the ${minutes(MAX_CLOCK_SKEW_MS)} allowed: check the clock of the host that produced it (API or tool server); `;
    if (lead > SELF_REPLAY_MAX_LEAD_MS) return { reason: `${said}not charged, replay it once that time has passed`, replayAfter: null };
    const replayAfter = new Date(at - MAX_CLOCK_SKEW_MS);
    return { reason: `${said}not charged yet: the billing worker charges it by itself from ${replayAfter.toISOString()}`, replayAfter };
  }
  if (at < EARLIEST_MS) {
    return { reason: `occurredAt ${occurredAt} is before ${EARLIEST_OCCURRED_AT.slice(0, 10)}, when no call of this service happened: check the clock of the host that produced it (API or tool server); not charged`, replayAfter: null };
  }
  return null;
}
