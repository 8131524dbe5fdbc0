import type { Knex } from 'knex';

// The audit log is read per organization, newest first, a page at a time (the activity page,
// the operator's recent activity); it only grows, so those reads need an index rather than a
// scan of every organization's rows.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX audit_log_organization_idx ON audit_log (organization_id, id DESC)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX audit_log_organization_idx');
}
