import type { Knex } from 'knex';

// The dashboard's gate tells a signed-in person who is no longer an admin (or no longer a
// member) of an organization what changed (core/dashboard-auth/audit-log.ts, lastMembershipEvent):
// it looks for the newest role change or removal naming them. For someone the organization's log
// never names, audit_log_organization_idx (migration 012) would read every row of that
// organization's log to find none, at every request to its address. Role changes and removals are
// a handful of rows; this index holds only them. Built CONCURRENTLY, outside a transaction, as
// migration 028's: audit_log may be large already, and a plain build would hold every write to it.
export const config = { transaction: false };

const NAME = 'audit_log_membership_events_idx';

export async function up(knex: Knex): Promise<void> {
  // IF EXISTS first: an interrupted CONCURRENTLY build leaves an invalid index behind.
  await knex.raw(`DROP INDEX CONCURRENTLY IF EXISTS ${NAME}`);
  await knex.raw(`CREATE INDEX CONCURRENTLY ${NAME} ON audit_log (organization_id, (details->>'userId'), id DESC)
    WHERE action IN ('member.role_changed', 'member.removed')`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP INDEX CONCURRENTLY IF EXISTS ${NAME}`);
}
