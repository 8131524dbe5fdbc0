import type { Measure } from './access-control.js';

// Calls this process served whose usage events the billing worker may not have applied yet.
// The cached balance and calls used only move once the worker has applied an event and the
// cache has reloaded; without this, an agent calling one tool after another (each call well
// inside that lag) could spend past its last credits or its calls cap. Each reload of the
// cached state asks the ledger which of these events it now holds (in the same statement that
// reads the balance, so the two agree), and those are forgotten here.
//
// Only organizations that could reach their balance or cap within the pipeline's lag are
// tracked (see `couldRunOut`): one with a billion credits left pays nothing for this per call.

export interface PendingTotals {
  credits: number;
  calls: number;
}

interface Entry {
  credits: number;
  calls: number;
  at: number;
}

interface OrganizationCharges extends PendingTotals {
  /** In the order added, so the oldest come first. */
  entries: Map<string, Entry>;
}

const none: PendingTotals = Object.freeze({ credits: 0, calls: 0 });

export interface PendingCharges {
  add(organizationId: string, eventId: string, measure: Measure, nowMs: number): void;
  /** Forgets one event: its call was not served after all. */
  remove(organizationId: string, eventId: string): void;
  totals(organizationId: string): PendingTotals;
  /** The events a reload of the organization's state should look up in the ledger. */
  eventIds(organizationId: string): string[];
  /** Forgets the events the ledger held when the balance was read, and those past `maxAgeMs`. */
  settle(organizationId: string, applied: ReadonlySet<string>, nowMs: number): void;
  /** Forgets every organization's events past `maxAgeMs`: an organization that stopped calling is never settled. */
  sweep(nowMs: number): void;
}

/**
 * `maxAgeMs`: an event still unapplied after this long is forgotten (one the worker will never
 * apply: set aside as a dead letter): the overspend window of docs/billing.md takes over from
 * there. Long enough to outlast a stopped worker (create-access-control.ts: an hour).
 */
export function createPendingCharges(options: { maxAgeMs: number }): PendingCharges {
  const byOrganization = new Map<string, OrganizationCharges>();

  const forget = (organizationId: string, charges: OrganizationCharges, eventId: string, entry: Entry) => {
    charges.entries.delete(eventId);
    charges.credits -= entry.credits;
    charges.calls -= entry.calls;
    if (charges.entries.size === 0) byOrganization.delete(organizationId);
  };
  const forgetOld = (organizationId: string, charges: OrganizationCharges, nowMs: number) => {
    for (const [eventId, entry] of charges.entries) {
      if (nowMs - entry.at < options.maxAgeMs) break;
      forget(organizationId, charges, eventId, entry);
    }
  };

  return {
    add(organizationId, eventId, measure, nowMs) {
      let charges = byOrganization.get(organizationId);
      if (!charges) byOrganization.set(organizationId, (charges = { credits: 0, calls: 0, entries: new Map() }));
      else forgetOld(organizationId, charges, nowMs);
      if (charges.entries.has(eventId)) return;
      const entry: Entry = { credits: measure.unit === 'credits' ? measure.quantity : 0, calls: measure.unit === 'calls' ? measure.quantity : 0, at: nowMs };
      charges.entries.set(eventId, entry);
      charges.credits += entry.credits;
      charges.calls += entry.calls;
      if (!byOrganization.has(organizationId)) byOrganization.set(organizationId, charges);
    },

    remove(organizationId, eventId) {
      const charges = byOrganization.get(organizationId);
      const entry = charges?.entries.get(eventId);
      if (charges && entry) forget(organizationId, charges, eventId, entry);
    },

    totals: (organizationId) => byOrganization.get(organizationId) ?? none,

    eventIds: (organizationId) => [...(byOrganization.get(organizationId)?.entries.keys() ?? [])],

    settle(organizationId, applied, nowMs) {
      const charges = byOrganization.get(organizationId);
      if (!charges) return;
      for (const eventId of applied) {
        const entry = charges.entries.get(eventId);
        if (entry) forget(organizationId, charges, eventId, entry);
      }
      forgetOld(organizationId, charges, nowMs);
    },

    sweep(nowMs) {
      for (const [organizationId, charges] of byOrganization) forgetOld(organizationId, charges, nowMs);
    },
  };
}

/**
 * Whether the organization, at its own rate limits, could use up what is left (after the calls
 * already pending) within `horizonSeconds` (the pipeline's lag, taken generously), paying
 * `measure` per call: then its calls are tracked.
 */
export function couldRunOut(
  left: { creditsBalance: number | null; callsUsed: number; callsCap: number | null },
  pending: PendingTotals,
  measure: Measure,
  limits: { perSecond: number; burst: number },
  horizonSeconds: number,
): boolean {
  const reach = measure.quantity * (limits.burst + limits.perSecond * horizonSeconds);
  if (measure.unit === 'credits') return left.creditsBalance !== null && left.creditsBalance - pending.credits < reach;
  return left.callsCap !== null && left.callsCap - left.callsUsed - pending.calls < reach;
}
