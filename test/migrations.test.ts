import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../core/config/index.js';
import { createDb, migrateLatest, migrateRollbackAll, migrationStatus, openDatabase, type Db } from '../core/db/index.js';
import { MIGRATION_LOCK_KEY } from '../core/db/migration-lock.js';
import { createLogger } from '../core/logging/index.js';
import * as compactStoredMetrics from '../migrations/20261122_008_compact_stored_metrics.js';
import * as usageBusBatches from '../migrations/20261122_010_usage_bus_batches.js';
import * as capChangeEntries from '../migrations/20261125_021_cap_change_entries.js';
import * as flagEventActor from '../migrations/20261126_023_flag_event_actor.js';
import { migrations } from '../migrations/index.js';
import { createScratchDatabase, type ScratchDatabase } from './support/database.js';
import { runCli, runCliWithEnv } from './support/run-cli.js';

// The tables the mission needs (issue 2, item 3). A migration may add more; none may go missing.
const expectedTables = [
  'companies', 'company_holders', 'company_officers', 'company_branches', 'company_years', 'metric_definitions',
  'plans', 'plan_entitlements', 'organizations', 'organization_overrides', 'users', 'api_keys', 'allowances',
  'allowance_flag_events', 'usage_ledger', 'usage_bus_batches', 'usage_dead_letters',
  'memberships', 'sessions', 'invitations', 'sign_in_attempts', 'alert_settings', 'alert_thresholds',
  'webhook_deliveries', 'audit_log',
];
const knexTables = ['knex_migrations', 'knex_migrations_lock'];

describe('migrations', () => {
  let scratch: ScratchDatabase;
  let db: Db;

  beforeAll(async () => {
    scratch = await createScratchDatabase('migrations');
    db = createDb({ connectionString: scratch.url, poolMax: 2 });
  });
  afterAll(async () => {
    await db?.destroy();
    await scratch?.drop();
  });

  const tables = async () =>
    (await db('pg_tables').where({ schemaname: 'public' }).pluck('tablename')).filter((t: string) => !knexTables.includes(t)).sort();
  // Our own functions (trigger functions), not the ones an extension such as pg_trgm owns.
  const functions = async () =>
    (await db.raw(`
      SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = 'public'
        AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')`)).rows.map((r: { proname: string }) => r.proname);

  it('when migrated to latest, then rolled back, then migrated again, then every table comes and goes with them', async () => {
    const applied = await migrateLatest(db);
    expect(applied).toEqual(migrations.map((m) => m.name));
    expect(await tables()).toEqual(expect.arrayContaining(expectedTables));
    expect((await functions()).length).toBeGreaterThan(0);

    const rolledBack = await migrateRollbackAll(db);
    expect(rolledBack.sort()).toEqual(migrations.map((m) => m.name).sort());
    expect(await tables()).toEqual([]);
    expect(await functions()).toEqual([]);

    expect(await migrateLatest(db)).toEqual(migrations.map((m) => m.name));
    expect(await tables()).toEqual(expect.arrayContaining(expectedTables));
    // Latest on an up-to-date database is a no-op.
    expect(await migrateLatest(db)).toEqual([]);
  });

  it('when a child row names no stored company then it is refused like a foreign key, and deleting a company deletes its children', async () => {
    const [{ id }] = await db('companies').insert({ fiscal_code: '00000000009', legal_name: 'Children S.r.l.' }).returning('id');
    await db('company_officers').insert({ company_id: id, position: 0, name: 'Anna Rossi', role_category: 'legal_representative' });
    await db('company_years').insert({ company_id: id, year: 2024 });

    const missing = Number(id) + 1_000_000;
    for (const insert of [
      () => db('company_years').insert([{ company_id: id, year: 2025 }, { company_id: missing, year: 2025 }]),
      () => db('company_holders').insert({ company_id: missing, relation: 'shareholder', position: 0, name: 'X', holder_kind: 'person' }),
      () => db('company_officers').where({ company_id: id }).update({ company_id: missing }),
    ]) {
      await expect(insert()).rejects.toMatchObject({ code: '23503', detail: `Key (company_id)=(${missing}) is not present in table "companies".` });
    }
    // Nothing of a refused statement stays.
    expect(await db('company_years').where({ company_id: id }).pluck('year')).toEqual([2024]);

    await db('companies').where({ id }).delete();
    for (const table of ['company_officers', 'company_years']) expect(await db(table).where({ company_id: id })).toEqual([]);
  });

  it('when a value outside decisions.md\'s closed lists is written past the import then the column refuses it', async () => {
    const [{ id }] = await db('companies').insert({ fiscal_code: '00000000017', legal_form: 'SPA', nace_section: 'C', size: 'large' }).returning('id');
    await db('company_officers').insert({ company_id: id, position: 0, name: 'Anna Rossi', role_category: 'director' });
    await db('company_years').insert({ company_id: id, year: 2024, size: 'small' });
    for (const [write, constraint] of [
      [() => db('companies').where({ id }).update({ legal_form: 'S.p.A.' }), 'companies_legal_form_chk'],
      [() => db('companies').where({ id }).update({ nace_section: 'Z' }), 'companies_nace_section_chk'],
      [() => db('companies').where({ id }).update({ size: 'huge' }), 'companies_size_chk'],
      [() => db('company_years').where({ company_id: id }).update({ size: 'Small' }), 'company_years_size_chk'],
      [() => db('company_officers').where({ company_id: id }).update({ role_category: 'ceo' }), 'company_officers_role_category_chk'],
      [() => db('metric_definitions').insert({ slug: 'closed_list_probe', name: 'Probe', categories: ['ratio', 'kpi'] }), 'metric_definitions_categories_chk'],
    ] as const) {
      await expect(write()).rejects.toMatchObject({ code: '23514', constraint });
    }
    expect(await db('companies').where({ id }).first()).toMatchObject({ legal_form: 'SPA', nace_section: 'C', size: 'large' });
    await db('companies').where({ id }).delete();
  });

  it('when years were stored with keyed line items then the conversion makes them positional, and back', async () => {
    const [{ id }] = await db('companies').insert({ fiscal_code: '00000000008', legal_name: 'Stored metrics S.r.l.' }).returning('id');
    const keyed = [{ slug: 'revenue', value: 1200 }, { slug: 'ebitda', value: -3.5, yoyChange: 0.25, score: 7 }];
    await db('company_years').insert([{ company_id: id, year: 2024, metrics: JSON.stringify(keyed) }, { company_id: id, year: 2025, metrics: '[]' }]);
    const stored = async () => (await db('company_years').where({ company_id: id }).orderBy('year').select('metrics')).map((r: { metrics: unknown }) => r.metrics);

    await compactStoredMetrics.up(db);
    expect(await stored()).toEqual([[['revenue', 1200], ['ebitda', -3.5, { yoyChange: 0.25, score: 7 }]], []]);
    await compactStoredMetrics.up(db); // converted rows are left alone
    expect((await stored())[0]).toEqual([['revenue', 1200], ['ebitda', -3.5, { yoyChange: 0.25, score: 7 }]]);

    await compactStoredMetrics.down(db);
    expect(await stored()).toEqual([keyed, []]);
  });

  it('when cap changes were written as 0-credit adjustments then they become cap_change rows, and real adjustments stay', async () => {
    await db('organizations').insert({ id: 'org_migration_cap', name: 'cap migration' });
    await capChangeEntries.down(db);
    const row = (eventId: string, changes: Record<string, unknown>) => ({
      event_id: eventId, organization_id: 'org_migration_cap', entry_type: 'adjustment', source: 'admin', period: '2026-11', occurred_at: new Date(), ...changes,
    });
    await db('usage_ledger').insert([
      row('adj_cap_1', { reason: 'calls cap 100000 -> 5: trial' }),
      row('adj_cap_2', { reason: 'calls cap 5 -> none (this period only): plan standard' }),
      row('adj_credit', { credits_delta: -250, reason: 'refund of a double charge' }),
      row('adj_zero', { reason: 'calls cap talk, no change' }),
    ]);
    await capChangeEntries.up(db);
    expect(await db('usage_ledger').where({ organization_id: 'org_migration_cap' }).orderBy('event_id').select('event_id', 'entry_type')).toEqual([
      { event_id: 'adj_cap_1', entry_type: 'cap_change' },
      { event_id: 'adj_cap_2', entry_type: 'cap_change' },
      { event_id: 'adj_credit', entry_type: 'adjustment' },
      { event_id: 'adj_zero', entry_type: 'adjustment' },
    ]);
    await db('organizations').where({ id: 'org_migration_cap' }).delete();
  });

  it('when flag changes carried their actor in the reason then the actor moves to its own column, and the system\'s reasons stay whole', async () => {
    await db('organizations').insert({ id: 'org_migration_flags', name: 'flag actor migration' });
    await flagEventActor.down(db);
    const at = new Date();
    await db('allowance_flag_events').insert(
      ['top-up (usr_AbC123)', 'invoice (Nov) (cli:maria)', 'usage', 'period rollover to 2026-11', 'product company-report changed'].map((reason, i) => ({
        organization_id: 'org_migration_flags', flag: 'credits_exhausted', value: i % 2 === 0, reason, at,
      })),
    );
    await flagEventActor.up(db);
    expect(await db('allowance_flag_events').where({ organization_id: 'org_migration_flags' }).orderBy('id').select('reason', 'actor')).toEqual([
      { reason: 'top-up', actor: 'usr_AbC123' },
      { reason: 'invoice (Nov)', actor: 'cli:maria' },
      { reason: 'usage', actor: null },
      { reason: 'period rollover to 2026-11', actor: null },
      { reason: 'product company-report changed', actor: null },
    ]);
    await db('allowance_flag_events').where({ organization_id: 'org_migration_flags' }).delete();
    await db('organizations').where({ id: 'org_migration_flags' }).delete();
  });

  it('when usage events wait on the bus then moving between one row per event and one row per batch loses none, in order', async () => {
    const event = (n: number) => ({ v: 1, eventId: `req_migration_${n}`, organizationId: 'org_migration', quantity: n });
    await db('usage_bus_batches').insert([
      { events: JSON.stringify([event(1), event(2)]), event_count: 2 },
      { events: JSON.stringify({ garbage: true }), event_count: 1 },
    ]);

    await usageBusBatches.down(db);
    const perEvent = (await db('usage_bus_events').orderBy('seq').select('event_id', 'organization_id', 'payload')) as { event_id: string; organization_id: string; payload: object }[];
    expect(perEvent.map((r) => r.event_id)).toEqual(['req_migration_1', 'req_migration_2', expect.stringMatching(/^unreadable-/)]);
    expect(perEvent[0]).toEqual({ event_id: 'req_migration_1', organization_id: 'org_migration', payload: event(1) });
    expect(perEvent[2]!.payload).toEqual({ garbage: true }); // kept for the consumer to dead-letter
    await db('usage_bus_events').insert({ event_id: 'req_migration_3', organization_id: 'org_migration', payload: event(3) });

    await usageBusBatches.up(db);
    const batches = (await db('usage_bus_batches').orderBy('seq').select('events', 'event_count')) as { events: unknown[]; event_count: number }[];
    expect(batches).toEqual([{ events: [event(1), event(2), { garbage: true }, event(3)], event_count: 4 }]);
    expect(await tables()).not.toContain('usage_bus_events');
    await db('usage_bus_batches').delete();
  });
});

// Replicas of a service start together, each migrating on start (MIGRATE_ON_START), and a
// migrator may be killed half way; each test has a fresh database of its own.
describe('migrators at the same time', () => {
  const scratches: ScratchDatabase[] = [];
  afterAll(async () => {
    for (const scratch of scratches) await scratch.drop();
  });
  const freshDatabase = async () => {
    const scratch = await createScratchDatabase('migrators');
    scratches.push(scratch);
    return scratch.url;
  };
  const capturingLogger = () => {
    const lines: { level: string; msg: string; detail?: string }[] = [];
    return { lines, logger: createLogger({ level: 'debug', write: (line) => lines.push(JSON.parse(line)) }) };
  };
  const applied = async (url: string) => {
    const db = createDb({ connectionString: url, poolMax: 1 });
    try {
      return (await migrationStatus(db)).filter((m) => m.applied === true).map((m) => m.name);
    } finally {
      await db.destroy();
    }
  };

  it('when several processes start at once on a fresh database then all of them start, one applying the migrations and the others finding none left', async () => {
    const url = await freshDatabase();
    const { lines, logger } = capturingLogger();
    const config = parseConfig({ DATABASE_URL: url, MIGRATE_ON_START: 'true', DATABASE_POOL_MAX: '2' });
    const opened = await Promise.allSettled([1, 2, 3].map((n) => openDatabase(config, logger.child({ n }), `migrator-${n}`)));
    for (const result of opened) if (result.status === 'fulfilled') await result.value.close();

    expect(opened.map((r) => (r.status === 'rejected' ? String(r.reason) : 'started'))).toEqual(['started', 'started', 'started']);
    expect(lines.filter((l) => l.msg === 'migrations applied')).toHaveLength(1);
    expect(await applied(url)).toEqual(migrations.map((m) => m.name));
  });

  it('when several `migrate up` processes run at once on a fresh database then every one succeeds, and the migrations are applied once', async () => {
    const url = await freshDatabase();
    const runs = await Promise.all([1, 2, 3].map(() => runCli(url, 'migrate', 'up')));

    expect(runs.map((r) => ({ code: r.code, stderr: r.stderr }))).toEqual(runs.map(() => ({ code: 0, stderr: '' })));
    const said = runs.map((r) => r.stdout.trim()).sort();
    expect(said).toEqual(['already up to date', 'already up to date', `applied ${migrations.length}: ${migrations.map((m) => m.name).join(', ')}`]);
    expect(await applied(url)).toEqual(migrations.map((m) => m.name));
  }, 60_000);

  it('when a killed migrator left knex\'s lock set then the next `migrate up` clears it, saying so, and applies what is pending, and processes start again', async () => {
    const url = await freshDatabase();
    const db = createDb({ connectionString: url, poolMax: 1 });
    try {
      // What `migrate up` killed during its first migration leaves: knex's tables, nothing
      // applied, and the lock row set (knex commits it first when a migration runs outside a
      // transaction, as 20261125_013_ledger_pages does).
      await migrationStatus(db);
      await db('knex_migrations_lock').update({ is_locked: 1 });
    } finally {
      await db.destroy();
    }

    const run = await runCliWithEnv({ DATABASE_URL: url, LOG_LEVEL: 'warn' }, 'migrate', 'up');
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 0, stdout: `applied ${migrations.length}: ${migrations.map((m) => m.name).join(', ')}\n` });
    expect(run.stderr.trim().split('\n').map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({ level: 'warn', msg: expect.stringMatching(/^cleared a stale migration lock/), table: 'knex_migrations_lock' }),
    ]);

    // And again at start, where the process's own logger writes the line.
    const again = createDb({ connectionString: url, poolMax: 1 });
    await again('knex_migrations_lock').update({ is_locked: 1 });
    await again.destroy();
    const { lines, logger } = capturingLogger();
    const opened = await openDatabase(parseConfig({ DATABASE_URL: url, MIGRATE_ON_START: 'true' }), logger, 'start-after-kill');
    await opened.close();
    expect(lines).toContainEqual(expect.objectContaining({ level: 'warn', msg: expect.stringMatching(/^cleared a stale migration lock/), table: 'knex_migrations_lock' }));
  }, 60_000);

  it('when another session holds the migration lock then the migrator waits, says which session holds it, says so again while it waits, and migrates once it is let go', async () => {
    const url = await freshDatabase();
    const holderUrl = new URL(url);
    holderUrl.searchParams.set('application_name', 'stuck-migrator');
    const holder = new pg.Client({ connectionString: holderUrl.toString() });
    await holder.connect();
    const db = createDb({ connectionString: url, poolMax: 2 });
    try {
      await holder.query('SELECT pg_advisory_lock($1::bigint)', [MIGRATION_LOCK_KEY]);
      const { pid: holderPid, client: holderClient } = (await holder.query<{ pid: number; client: string | null }>('SELECT pg_backend_pid() AS pid, host(inet_client_addr()) AS client')).rows[0]!;
      const { lines, logger } = capturingLogger();
      const migrating = migrateLatest(db, { logger, remindEveryMs: 300 });
      await expect.poll(() => lines.filter((l) => l.msg.startsWith('still waiting')).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
      expect(await applied(url)).toEqual([]);
      await holder.query('SELECT pg_advisory_unlock($1::bigint)', [MIGRATION_LOCK_KEY]);
      expect(await migrating).toEqual(migrations.map((m) => m.name));

      const who = { holderPid, holderApplication: 'stuck-migrator', holderClient, holderSince: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) };
      expect(lines[0]).toEqual(expect.objectContaining({ level: 'info', msg: 'waiting for another process to finish its migrations', ...who }));
      const still = lines.filter((l) => l.msg.startsWith('still waiting'));
      expect(still[0]).toEqual(expect.objectContaining({
        level: 'warn', ...who,
        msg: expect.stringMatching(new RegExp(`^still waiting for another process to finish its migrations, after \\d+ s: PostgreSQL session ${holderPid} \\(stuck-migrator\\) holds the migration lock$`)),
      }));
    } finally {
      await holder.end();
      await db.destroy();
    }
  });

  // An older image started after a newer one migrated (a rollback): knex refused every command
  // ("The migration directory is corrupt") and the service would not start.
  it('when a newer release applied migrations this one does not have then status lists them, `migrate up` applies nothing and exits 0, and a service starts with a warning naming them', async () => {
    const url = await freshDatabase();
    expect((await runCli(url, 'migrate', 'up')).code).toBe(0);
    const db = createDb({ connectionString: url, poolMax: 1 });
    const newer = ['20991231_901_from_the_future', '20991231_902_also_future'];
    try {
      await db('knex_migrations').insert(newer.map((name) => ({ name, batch: 99, migration_time: new Date() })));
    } finally {
      await db.destroy();
    }

    const status = await runCli(url, 'migrate', 'status');
    expect({ code: status.code, stderr: status.stderr }).toEqual({ code: 0, stderr: '' });
    const lines = status.stdout.trim().split('\n');
    expect(lines.slice(-3)).toEqual([...newer.map((n) => `applied by a newer release  ${n}`), 'up to date, and 2 applied by a newer release']);
    expect(lines).toContain(`applied  ${migrations.at(-1)!.name}`);

    const up = await runCli(url, 'migrate', 'up');
    expect(up).toEqual({ code: 0, stderr: '', stdout: `the database schema is ahead of this release: 2 applied by a newer release (${newer.join(', ')}); nothing applied\n` });

    const { lines: logged, logger } = capturingLogger();
    const opened = await openDatabase(parseConfig({ DATABASE_URL: url, MIGRATE_ON_START: 'true' }), logger, 'rolled-back');
    await opened.close();
    expect(logged).toContainEqual(expect.objectContaining({ level: 'warn', msg: `the database schema is ahead of this release: ${newer.join(', ')} applied by a newer release; starting anyway, as migrations keep the previous release working` }));

    // Rolling back is for the release that knows them.
    const down = await runCli(url, 'migrate', 'down', '--yes');
    expect(down.code).toBe(1);
    expect(down.stderr).toContain(`The database schema is ahead of this release: ${newer.join(', ')} were applied by a newer release. Roll back with that release's`);
    expect(await applied(url)).toEqual(migrations.map((m) => m.name));
  }, 60_000);

  // Without lock_timeout, the migration's lock request queued behind the long transaction and
  // every write to users queued behind it (sign-ins, password changes) for as long as it lasted.
  it('when a long transaction holds a lock a migration needs then `migrate up` fails within MIGRATION_LOCK_TIMEOUT_MS saying to retry, applies nothing of it, and writers of the table wait no longer than that', async () => {
    const url = await freshDatabase();
    // password_resets' migration, and those after it, which are rolled back with it.
    const at = migrations.findIndex((m) => m.name === '20261126_034_password_resets');
    const last = migrations[at]!;
    const pending = migrations.slice(at);
    const db = createDb({ connectionString: url, poolMax: 2 });
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      await migrateLatest(db);
      // This release minus password_resets' migration and those after it: password_resets
      // references users, which takes a SHARE ROW EXCLUSIVE lock on users, refused while a write
      // to users is uncommitted.
      for (const migration of [...pending].reverse()) {
        await migration.down(db);
        await db('knex_migrations').where({ name: migration.name }).delete();
      }
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE users IN ROW EXCLUSIVE MODE');

      const startedAt = Date.now();
      const migrating = runCliWithEnv({ DATABASE_URL: url, LOG_LEVEL: 'error', MIGRATION_LOCK_TIMEOUT_MS: '1000' }, 'migrate', 'up');
      // While it waits, a write to users queues behind its lock request (not behind the holder's,
      // which it shares), and goes through once the migration gives up.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const writeStartedAt = Date.now();
      await db('users').where(db.raw('false')).update({ email: 'nobody' });
      expect(Date.now() - writeStartedAt).toBeLessThan(3_000);
      const run = await migrating;
      expect(Date.now() - startedAt).toBeLessThan(15_000);

      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr).toContain(`migration ${last.name} could not lock a table it changes within 1 s (MIGRATION_LOCK_TIMEOUT_MS): another transaction holds a lock on it`);
      expect(run.stderr).toContain('It was rolled back with its transaction: nothing of it is applied');
      expect(run.stderr).toContain('retry once that transaction is gone [SQLSTATE 55P03]');
      expect(await db.schema.hasTable('password_resets')).toBe(false);
      expect(await applied(url)).toEqual(migrations.slice(0, at).map((m) => m.name));

      await holder.query('COMMIT');
      const retry = await runCliWithEnv({ DATABASE_URL: url, LOG_LEVEL: 'error', MIGRATION_LOCK_TIMEOUT_MS: '1000' }, 'migrate', 'up');
      expect(retry).toEqual({ code: 0, stderr: '', stdout: `applied ${pending.length}: ${pending.map((m) => m.name).join(', ')}\n` });
    } finally {
      await holder.end();
      await db.destroy();
    }
  }, 60_000);

  it('when a migration fails then the migration lock goes with the run, and the next migrator is not kept waiting', async () => {
    const url = await freshDatabase();
    const db = createDb({ connectionString: url, poolMax: 2 });
    try {
      await db.raw('CREATE TABLE companies (squatter int)');
      for (let attempt = 0; attempt < 2; attempt += 1) {
        await expect(migrateLatest(db)).rejects.toThrow(/^migration 20261122_001_companies failed: /);
      }
      // Ended with its session, which the server may finish a moment after our side closed.
      const held = () => db('pg_locks')
        .join('pg_database', 'pg_database.oid', 'pg_locks.database')
        .where({ locktype: 'advisory', datname: db.raw('current_database()') })
        .whereRaw('((classid::bigint << 32) | objid::bigint) = ?::bigint', [MIGRATION_LOCK_KEY]);
      await expect.poll(held).toEqual([]);
    } finally {
      await db.destroy();
    }
  });
});
