import type { Knex } from 'knex';

// Organizations, plans, keys, allowances, the usage ledger and the Postgres usage bus.
// Usage and money are bigint. Triggers NOTIFY every process when a key, an organization's
// entitlements or its flags change, so caches drop stale entries in well under a second
// whoever made the change (CLI, dashboard, billing worker, a manual UPDATE).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('plans', (t) => {
    t.text('id').primary(); // e.g. "standard"
    t.text('name').notNullable();
    t.integer('rate_per_second').notNullable();
    t.integer('burst').notNullable();
    t.integer('rate_per_minute').notNullable();
    t.bigInteger('credits_per_period').notNullable().defaultTo(0); // granted at each calendar-month rollover
    t.bigInteger('calls_cap_per_period'); // null: no cap
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  // What a plan lets an organization call (API endpoint slug or MCP tool name) and its measure.
  await knex.schema.createTable('plan_entitlements', (t) => {
    t.text('plan_id').notNullable().references('plans.id').onDelete('CASCADE');
    t.text('product').notNullable();
    t.text('product_kind').notNullable(); // endpoint | tool
    t.bigInteger('quantity').notNullable();
    t.text('unit').notNullable(); // credits | calls
    t.primary(['plan_id', 'product']);
  });
  await knex.raw("ALTER TABLE plan_entitlements ADD CONSTRAINT plan_entitlements_unit_chk CHECK (unit IN ('credits','calls'))");
  await knex.raw("ALTER TABLE plan_entitlements ADD CONSTRAINT plan_entitlements_kind_chk CHECK (product_kind IN ('endpoint','tool'))");
  await knex.raw('ALTER TABLE plan_entitlements ADD CONSTRAINT plan_entitlements_quantity_chk CHECK (quantity >= 0)');

  await knex.schema.createTable('organizations', (t) => {
    t.text('id').primary(); // org_ + base62
    t.text('name').notNullable();
    t.text('plan_id').references('plans.id'); // null: client_not_configured
    t.text('status').notNullable().defaultTo('active'); // active | suspended
    // Per-organization overrides of the plan's limits; null means "as the plan says".
    t.integer('rate_per_second');
    t.integer('burst');
    t.integer('rate_per_minute');
    t.bigInteger('credits_per_period');
    t.bigInteger('calls_cap_per_period');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  // Per-organization changes to the plan's product list: enabled=false removes a product,
  // otherwise the row adds it or replaces its measure.
  await knex.schema.createTable('organization_overrides', (t) => {
    t.text('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('product').notNullable();
    t.text('product_kind').notNullable();
    t.boolean('enabled').notNullable().defaultTo(true);
    t.bigInteger('quantity');
    t.text('unit');
    t.primary(['organization_id', 'product']);
  });
  await knex.raw("ALTER TABLE organization_overrides ADD CONSTRAINT organization_overrides_unit_chk CHECK (unit IS NULL OR unit IN ('credits','calls'))");

  await knex.schema.createTable('users', (t) => {
    t.text('id').primary(); // usr_ + base62
    t.text('email').notNullable();
    t.text('name');
    t.text('password_hash'); // scrypt; null until an invitation is accepted
    t.boolean('is_operator').notNullable().defaultTo(false);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('disabled_at', { useTz: true });
  });
  await knex.raw('CREATE UNIQUE INDEX users_email_idx ON users (lower(email))');

  await knex.schema.createTable('api_keys', (t) => {
    t.text('id').primary(); // key_ + base62
    t.text('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('kind').notNullable().defaultTo('organization'); // organization | personal
    t.text('mode').notNullable().defaultTo('live'); // live | test
    t.text('user_id').references('users.id'); // personal keys only
    t.text('hash').notNullable().unique(); // hex SHA-256 of the full key; the key itself is never stored
    t.text('prefix').notNullable(); // display prefix, e.g. sk_live_AbCd
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.text('created_by');
    t.timestamp('expires_at', { useTz: true });
    t.timestamp('revoked_at', { useTz: true });
    t.text('revoked_by');
    t.timestamp('last_used_at', { useTz: true });
    t.text('rotated_from').references('api_keys.id');
  });
  await knex.raw("ALTER TABLE api_keys ADD CONSTRAINT api_keys_kind_chk CHECK (kind IN ('organization','personal'))");
  await knex.raw('CREATE INDEX api_keys_org_idx ON api_keys (organization_id)');

  // Current-period allowance and the enforcement flags the API and tool server read.
  await knex.schema.createTable('allowances', (t) => {
    t.text('organization_id').primary().references('organizations.id').onDelete('CASCADE');
    t.text('period').notNullable(); // YYYY-MM, calendar month UTC
    t.bigInteger('credits_balance').notNullable().defaultTo(0);
    t.bigInteger('calls_used').notNullable().defaultTo(0); // this period
    t.bigInteger('calls_cap'); // this period; null: no cap
    t.boolean('credits_exhausted').notNullable().defaultTo(false);
    t.boolean('limit_reached').notNullable().defaultTo(false);
    t.timestamp('last_event_at', { useTz: true }); // "as of": newest usage event applied
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('allowance_flag_events', (t) => {
    t.bigIncrements('id').primary();
    t.text('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('flag').notNullable(); // credits_exhausted | limit_reached
    t.boolean('value').notNullable();
    t.text('reason');
    t.timestamp('at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('CREATE INDEX allowance_flag_events_org_idx ON allowance_flag_events (organization_id, at)');

  // Every change to an allowance, one row each: usage (unique per usage event id, so a
  // redelivered event inserts nothing), grants, top-ups, adjustments and period rollovers.
  await knex.schema.createTable('usage_ledger', (t) => {
    t.bigIncrements('id').primary();
    t.text('event_id').notNullable().unique(); // usage: the requestId; others: adj_/grt_ ids
    t.text('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('entry_type').notNullable(); // usage | grant | top_up | adjustment | period_rollover
    t.text('source').notNullable(); // api | mcp | admin | system
    t.text('key_id');
    t.text('product'); // endpoint slug or tool name (usage)
    t.bigInteger('quantity').notNullable().defaultTo(0);
    t.text('unit'); // credits | calls
    t.bigInteger('credits_delta').notNullable().defaultTo(0);
    t.bigInteger('calls_delta').notNullable().defaultTo(0);
    t.bigInteger('credits_balance_after');
    t.text('period').notNullable(); // YYYY-MM of occurred_at
    t.timestamp('occurred_at', { useTz: true }).notNullable();
    t.timestamp('applied_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.text('actor'); // who made an adjustment
    t.text('reason'); // why
  });
  await knex.raw("ALTER TABLE usage_ledger ADD CONSTRAINT usage_ledger_type_chk CHECK (entry_type IN ('usage','grant','top_up','adjustment','period_rollover'))");
  await knex.raw('CREATE INDEX usage_ledger_org_period_idx ON usage_ledger (organization_id, period, occurred_at)');

  // The Postgres usage bus (embedded default and small deployments): the API inserts, the
  // billing worker claims with FOR UPDATE SKIP LOCKED and deletes in its ledger transaction.
  await knex.schema.createTable('usage_bus_events', (t) => {
    t.bigIncrements('seq').primary();
    t.text('event_id').notNullable().unique();
    t.text('organization_id').notNullable();
    t.jsonb('payload').notNullable();
    t.timestamp('enqueued_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('usage_dead_letters', (t) => {
    t.bigIncrements('id').primary();
    t.text('bus').notNullable(); // postgres | kafka
    t.text('payload').notNullable();
    t.text('reason').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.raw(`
    CREATE FUNCTION notify_api_key_change() RETURNS trigger AS $$
    BEGIN
      PERFORM pg_notify('api_key_changed', NEW.hash);
      RETURN NEW;
    END $$ LANGUAGE plpgsql;
    CREATE TRIGGER api_keys_notify AFTER UPDATE OF revoked_at, expires_at, kind, organization_id ON api_keys
      FOR EACH ROW EXECUTE FUNCTION notify_api_key_change();

    CREATE FUNCTION notify_organization_change() RETURNS trigger AS $$
    BEGIN
      PERFORM pg_notify('organization_changed', COALESCE(NEW.organization_id, OLD.organization_id));
      RETURN NULL;
    END $$ LANGUAGE plpgsql;
    CREATE TRIGGER allowances_notify AFTER INSERT OR UPDATE OF credits_exhausted, limit_reached, period ON allowances
      FOR EACH ROW EXECUTE FUNCTION notify_organization_change();
    CREATE TRIGGER organization_overrides_notify AFTER INSERT OR UPDATE OR DELETE ON organization_overrides
      FOR EACH ROW EXECUTE FUNCTION notify_organization_change();

    CREATE FUNCTION notify_organization_row_change() RETURNS trigger AS $$
    BEGIN
      PERFORM pg_notify('organization_changed', NEW.id);
      RETURN NULL;
    END $$ LANGUAGE plpgsql;
    CREATE TRIGGER organizations_notify AFTER UPDATE ON organizations
      FOR EACH ROW EXECUTE FUNCTION notify_organization_row_change();

    CREATE FUNCTION notify_plan_change() RETURNS trigger AS $$
    BEGIN
      PERFORM pg_notify('plan_changed', COALESCE(NEW.plan_id, OLD.plan_id));
      RETURN NULL;
    END $$ LANGUAGE plpgsql;
    CREATE TRIGGER plan_entitlements_notify AFTER INSERT OR UPDATE OR DELETE ON plan_entitlements
      FOR EACH ROW EXECUTE FUNCTION notify_plan_change();

    CREATE FUNCTION notify_plan_row_change() RETURNS trigger AS $$
    BEGIN
      PERFORM pg_notify('plan_changed', NEW.id);
      RETURN NULL;
    END $$ LANGUAGE plpgsql;
    CREATE TRIGGER plans_notify AFTER UPDATE ON plans
      FOR EACH ROW EXECUTE FUNCTION notify_plan_row_change();

    CREATE FUNCTION notify_usage_bus() RETURNS trigger AS $$
    BEGIN
      PERFORM pg_notify('usage_bus', '');
      RETURN NULL;
    END $$ LANGUAGE plpgsql;
    CREATE TRIGGER usage_bus_notify AFTER INSERT ON usage_bus_events
      FOR EACH STATEMENT EXECUTE FUNCTION notify_usage_bus();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER IF EXISTS usage_bus_notify ON usage_bus_events;
    DROP TRIGGER IF EXISTS plans_notify ON plans;
    DROP TRIGGER IF EXISTS plan_entitlements_notify ON plan_entitlements;
    DROP TRIGGER IF EXISTS organizations_notify ON organizations;
    DROP TRIGGER IF EXISTS organization_overrides_notify ON organization_overrides;
    DROP TRIGGER IF EXISTS allowances_notify ON allowances;
    DROP TRIGGER IF EXISTS api_keys_notify ON api_keys;
    DROP FUNCTION IF EXISTS notify_usage_bus();
    DROP FUNCTION IF EXISTS notify_plan_row_change();
    DROP FUNCTION IF EXISTS notify_plan_change();
    DROP FUNCTION IF EXISTS notify_organization_row_change();
    DROP FUNCTION IF EXISTS notify_organization_change();
    DROP FUNCTION IF EXISTS notify_api_key_change();
  `);
  for (const table of [
    'usage_dead_letters', 'usage_bus_events', 'usage_ledger', 'allowance_flag_events', 'allowances',
    'api_keys', 'users', 'organization_overrides', 'organizations', 'plan_entitlements', 'plans',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
}
