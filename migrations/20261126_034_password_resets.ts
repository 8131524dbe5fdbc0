import type { Knex } from 'knex';

// Password reset links (core/dashboard-auth/password-resets.ts). There is no e-mail: an admin of
// the person's organization, or an operator, makes a link and hands it over, as invitations are.
// The table holds the link secret's SHA-256 only, so a leaked table opens nothing.
//
// One row per person (the unique index): a new link replaces the one before, used or not, so the
// table stays as small as the number of people who ever lost a password. `password_digest` is the
// SHA-256 of the person's password hash when the link was made (null: they had none), as sessions
// and trusted browsers keep it (migrations 027, 029): a password set since, by whatever means,
// leaves the link opening nothing. `organization_id` is the members page it was made on (null:
// the CLI); `issued_as` whether an admin or an operator made it, since an admin's link holds only
// while the person belongs to that organization alone.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE password_resets (
    token_hash text PRIMARY KEY,
    user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    organization_id text REFERENCES organizations(id) ON DELETE CASCADE,
    issued_by text NOT NULL,
    issued_as text NOT NULL CONSTRAINT password_resets_issued_as_chk CHECK (issued_as IN ('admin', 'operator')),
    password_digest text,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    used_at timestamptz
  )`);
  await knex.raw('CREATE UNIQUE INDEX password_resets_user_idx ON password_resets (user_id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE password_resets');
}
