import type { Knex } from 'knex';

// An organization's own calls cap may be "no cap", which calls_cap_per_period alone cannot say:
// there NULL means "as the plan says", so an organization sold unlimited calls (set-cap none)
// fell back to its plan's cap at the next rollover or plan change. calls_cap_own says whether the
// organization has a cap of its own, and then calls_cap_per_period is that cap, NULL for none.
// Existing non-NULL caps are organizations' own.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE organizations ADD COLUMN calls_cap_own boolean NOT NULL DEFAULT false');
  await knex.raw('UPDATE organizations SET calls_cap_own = true WHERE calls_cap_per_period IS NOT NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE organizations DROP COLUMN calls_cap_own');
}
