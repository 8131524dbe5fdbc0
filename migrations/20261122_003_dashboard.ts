import type { Knex } from 'knex';

// People, sessions and alerts for the dashboard: who belongs to which organization in which
// role, server-side sessions, invitations, allowance thresholds and their signed webhooks.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('memberships', (t) => {
    t.text('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('role').notNullable(); // admin | finance
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['user_id', 'organization_id']);
  });
  await knex.raw("ALTER TABLE memberships ADD CONSTRAINT memberships_role_chk CHECK (role IN ('admin','finance'))");

  await knex.schema.createTable('sessions', (t) => {
    t.text('id_hash').primary(); // SHA-256 of the cookie value
    t.text('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('csrf_token').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('revoked_at', { useTz: true });
  });
  await knex.raw('CREATE INDEX sessions_user_idx ON sessions (user_id)');

  await knex.schema.createTable('invitations', (t) => {
    t.text('token_hash').primary();
    t.text('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('email').notNullable();
    t.text('role').notNullable();
    t.text('invited_by');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('accepted_at', { useTz: true });
  });

  await knex.schema.createTable('sign_in_attempts', (t) => {
    t.bigIncrements('id').primary();
    t.text('email').notNullable();
    t.text('ip');
    t.boolean('succeeded').notNullable();
    t.timestamp('at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('CREATE INDEX sign_in_attempts_email_idx ON sign_in_attempts (lower(email), at)');

  await knex.schema.createTable('alert_settings', (t) => {
    t.text('organization_id').primary().references('organizations.id').onDelete('CASCADE');
    t.text('webhook_url');
    t.text('webhook_secret').notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  // A threshold fires once per period; a top-up or the new period re-arms it.
  await knex.schema.createTable('alert_thresholds', (t) => {
    t.text('id').primary(); // thr_ + base62
    t.text('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('kind').notNullable(); // percent_used | balance_below
    t.bigInteger('value').notNullable(); // percent (0..100) or credits
    t.text('fired_period'); // YYYY-MM it last fired in
    t.timestamp('fired_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.text('id').primary(); // whd_ + base62
    t.text('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('threshold_id');
    t.text('event_type').notNullable();
    t.jsonb('payload').notNullable();
    t.text('status').notNullable().defaultTo('pending'); // pending | delivered | failed
    t.integer('attempts').notNullable().defaultTo(0);
    t.timestamp('next_attempt_at', { useTz: true });
    t.integer('last_status_code');
    t.text('last_error');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('delivered_at', { useTz: true });
  });
  await knex.raw("CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'");

  await knex.schema.createTable('audit_log', (t) => {
    t.bigIncrements('id').primary();
    t.text('organization_id');
    t.text('actor').notNullable();
    t.text('action').notNullable();
    t.jsonb('details');
    t.timestamp('at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['audit_log', 'webhook_deliveries', 'alert_thresholds', 'alert_settings', 'sign_in_attempts', 'invitations', 'sessions', 'memberships']) {
    await knex.schema.dropTableIfExists(table);
  }
}
