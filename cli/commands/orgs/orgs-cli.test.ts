import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createApiKey, createKeyVerifier, type KeyVerifier } from '../../../core/auth/index.js';
import { rotateApiKey } from '../../../core/key-rotation/index.js';
import { createOrganization, ensureDefaultPlans } from '../../../core/billing/index.js';
import { createDb, type Db } from '../../../core/db/index.js';
import { createLogger } from '../../../core/logging/index.js';
import { runCli, runCliWithEnv } from '../../../test/support/run-cli.js';

const databaseUrl = inject('databaseUrl');
let db: Db;
let verifier: KeyVerifier;


const cli = (...args: string[]) => runCli(databaseUrl, ...args);

beforeAll(async () => {
  db = createDb({ connectionString: databaseUrl, poolMax: 2 });
  verifier = createKeyVerifier({ db, logger: createLogger({ level: 'silent' }), ttlMs: 60_000, listenConnectionString: databaseUrl });
  await verifier.ready();
});
afterAll(async () => {
  await verifier.close();
  await db.destroy();
});

describe('operator CLI: organizations and keys', () => {
  it('when an operator creates an organization and a key then the key is printed once and authenticates, and revoking it refuses it', async () => {
    const created = await cli('org', 'create', '--name', 'CLI smoke SRL');
    expect(created.code).toBe(0);
    const orgId = created.stdout.trim();
    expect(orgId).toMatch(/^org_[0-9A-Za-z]+$/);

    // No keys yet: nothing on stdout (no lone header row), and a hint on stderr.
    const none = await cli('key', 'list', '--org', orgId);
    expect(none).toMatchObject({ code: 0, stdout: '' });
    expect(none.stderr).toContain(`${orgId} has no keys: create one with \`cli key create --org ${orgId} --name NAME\``);

    const key = await cli('key', 'create', '--org', orgId, '--name', 'smoke');
    expect(key.code).toBe(0);
    const secret = key.stdout.trim();
    expect(secret).toMatch(/^sk_live_[0-9A-Za-z]{32}$/);
    expect(key.stderr).toMatch(/shown only once/);
    const principal = await verifier.verify(`Bearer ${secret}`);
    expect(principal.organizationId).toBe(orgId);

    const list = await cli('key', 'list', '--org', orgId);
    expect(list.stdout).toContain(principal.keyId);
    expect(list.stdout).toContain(secret.slice(0, 12));
    expect(list.stdout).not.toContain(secret); // the key itself is never shown again

    const revoked = await cli('key', 'revoke', principal.keyId);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toMatch(new RegExp(`^${principal.keyId} revoked at `));
    // Again: nothing changes, it says so, and no second audit row.
    const again = await cli('key', 'revoke', principal.keyId);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(new RegExp(`^${principal.keyId} was already revoked at `));
    // Each change is on the organization's audit log (the dashboard's activity page), by the CLI's actor.
    const audit = await db('audit_log').where({ organization_id: orgId }).orderBy('id').select<{ actor: string; action: string; details: Record<string, unknown> }[]>('actor', 'action', 'details');
    expect(audit.map((a) => [a.action, a.details])).toEqual([
      ['organization.created', { name: 'CLI smoke SRL', planId: 'standard' }],
      ['key.created', { keyId: principal.keyId, name: 'smoke', mode: 'live' }],
      ['key.revoked', { keyId: principal.keyId }],
    ]);
    expect(new Set(audit.map((a) => a.actor))).toEqual(new Set([`cli:${process.env.USER ?? 'operator'}`]));
    await expect.poll(() => verifier.verify(`Bearer ${secret}`).then(() => 'ok', (e: { code: string }) => e.code), { timeout: 1_000, interval: 20 }).toBe('invalid_api_key');

    // The live keys alone, the revoked ones alone, and the same as JSON for scripts.
    const second = (await cli('key', 'create', '--org', orgId, '--name', 'second')).stdout.trim();
    const secondId = (await verifier.verify(`Bearer ${second}`)).keyId;
    const active = await cli('key', 'list', '--org', orgId, '--state', 'active');
    expect(active.stdout).toContain(secondId);
    expect(active.stdout).not.toContain(principal.keyId);
    const asJson = JSON.parse((await cli('key', 'list', '--org', orgId, '--state', 'revoked', '--format', 'json')).stdout) as Record<string, unknown>[];
    expect(asJson).toEqual([expect.objectContaining({ id: principal.keyId, name: 'smoke', state: 'revoked', prefix: secret.slice(0, 12), expiresAt: null })]);
    expect(JSON.stringify(asJson)).not.toContain(secret);
    expect(await cli('key', 'list', '--org', orgId, '--state', 'expired')).toMatchObject({ code: 0, stdout: '', stderr: expect.stringContaining(`${orgId} has no expired keys`) });
  });

  it('when a key was rotated and is in its grace period then key list says expiring, as the dashboard does, and lists it among the active ones', async () => {
    const orgId = (await cli('org', 'create', '--name', 'CLI expiring key SRL')).stdout.trim();
    // Rotated as the dashboard's Rotate button does: the old key keeps working for a day.
    const old = await createApiKey(db, { organizationId: orgId, name: 'rotated' });
    const { created } = await rotateApiKey(db, { keyId: old.record.id, organizationId: orgId, graceSeconds: 86_400, by: 'test' });
    const dated = await createApiKey(db, { organizationId: orgId, name: 'dated', expiresAt: new Date('2099-12-31T23:59:59.999Z') });
    const stateOf = (stdout: string, keyId: string) => stdout.split('\n').find((line) => line.startsWith(keyId))?.split(/\s{2,}/)[5];

    const table = (await cli('key', 'list', '--org', orgId)).stdout;
    expect(table.split('\n')[0]).toMatch(/^ID\s+PREFIX\s+NAME\s+KIND\s+MODE\s+STATE\s/);
    expect(stateOf(table, old.record.id)).toBe('expiring');
    expect(stateOf(table, created.record.id)).toBe('active');
    // A date decades ahead is not "expiring": that warns of keys that stop working soon.
    expect(stateOf(table, dated.record.id)).toBe('active');
    // Still working, so among the active keys (the dashboard's Active tab lists it too).
    const active = JSON.parse((await cli('key', 'list', '--org', orgId, '--state', 'active', '--format', 'json')).stdout) as { id: string; state: string }[];
    expect(Object.fromEntries(active.map((k) => [k.id, k.state]))).toEqual({ [old.record.id]: 'expiring', [created.record.id]: 'active', [dated.record.id]: 'active' });
  });

  it('when an operator overrides a product then org show lists the new measure', async () => {
    const orgId = (await cli('org', 'create', '--name', 'CLI override SRL')).stdout.trim();
    expect((await cli('org', 'override', orgId, 'company-financials', '--quantity', '3', '--unit', 'calls')).code).toBe(0);
    const shown = await cli('org', 'show', orgId);
    expect(shown.stdout).toMatch(/company-financials\s+endpoint\s+3\s+calls\s+override/);
  });

  it('when org override runs while an operator form holds the organization, then it waits for the form (which compares the override with its page meanwhile), setting and clearing alike', async () => {
    const orgId = (await cli('org', 'create', '--name', 'CLI override waits SRL')).stdout.trim();
    const override = () => db('organization_overrides').where({ organization_id: orgId, product: 'company-financials' }).first('quantity', 'unit');
    for (const [args, after] of [[['--quantity', '3', '--unit', 'calls'], { quantity: 3, unit: 'calls' }], [['--clear'], undefined]] as const) {
      // Hold the organization's row as the operator's product form does while it compares the
      // override with what its page showed; the CLI must not change the override in between.
      const form = await db.transaction();
      let run: ReturnType<typeof cli> | undefined;
      try {
        await form('organizations').where({ id: orgId }).forUpdate().first('id');
        const holder = Number((await form.raw('SELECT pg_backend_pid() AS pid')).rows[0].pid);
        let finished = false;
        run = cli('org', 'override', orgId, 'company-financials', ...args);
        void run.then(() => { finished = true; });
        const blocked = async () => Number((await db.raw('SELECT count(*) AS n FROM pg_stat_activity WHERE ? = ANY(pg_blocking_pids(pid))', [holder])).rows[0].n);
        const deadline = Date.now() + 20_000;
        while ((await blocked()) === 0) {
          if (finished) throw new Error(`org override ${args.join(' ')} finished without waiting for the organization row`);
          if (Date.now() > deadline) throw new Error('org override never waited for the organization row');
          await new Promise((r) => setTimeout(r, 50));
        }
        await form.commit();
      } finally {
        if (!form.isCompleted()) await form.rollback();
      }
      const done = await run;
      expect(done.code, done.stderr).toBe(0);
      expect(await override()).toEqual(after);
    }
  });

  it('when an organization has 1 credit left and has used 1 call, then org show says both in the singular', async () => {
    const orgId = (await cli('org', 'create', '--name', 'CLI one credit SRL')).stdout.trim();
    const { credits_balance: balance } = await db('allowances').where({ organization_id: orgId }).first<{ credits_balance: number }>('credits_balance');
    expect((await cli('billing', 'adjust', '--org', orgId, '--credits', String(1 - balance), '--reason', 'one left')).code).toBe(0);
    await db('allowances').where({ organization_id: orgId }).update({ calls_used: 1 });
    expect((await cli('org', 'show', orgId)).stdout).toMatch(/^period: {3}\d{4}-\d{2}: 1 credit left, 1 call used of /m);
    await db('allowances').where({ organization_id: orgId }).update({ credits_balance: 2, calls_used: 0 });
    expect((await cli('org', 'show', orgId)).stdout).toMatch(/^period: {3}\d{4}-\d{2}: 2 credits left, 0 calls used of /m);
  });

  it('when --quantity or --unit is given alone then the other part of an existing override is kept, and the answer says the measure now billed', async () => {
    const orgId = (await cli('org', 'create', '--name', 'CLI partial override SRL')).stdout.trim();
    const unit = await cli('org', 'override', orgId, 'company-report', '--unit', 'credits');
    expect(unit.stdout).toBe(`${orgId}: company-report enabled at 1 credit (the plan's quantity)\n`);
    const quantity = await cli('org', 'override', orgId, 'company-report', '--quantity', '0');
    expect(quantity.stdout).toBe(`${orgId}: company-report enabled at 0 credits (override)\n`);
    expect((await cli('org', 'show', orgId)).stdout).toMatch(/company-report\s+endpoint\s+0\s+credits\s+override/);
    // No option: the plan's measure again.
    const plain = await cli('org', 'override', orgId, 'company-report');
    expect(plain.stdout).toBe(`${orgId}: company-report enabled at 1 call (the plan's measure)\n`);
  });

  it('when a key is created for an organization with no plan then it is made, and stderr warns that every call with it is refused until the organization has one', async () => {
    const orgId = (await cli('org', 'create', '--name', 'CLI no plan SRL', '--plan', 'none')).stdout.trim();
    const run = await cli('key', 'create', '--org', orgId, '--name', 'early');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^sk_live_[0-9A-Za-z]{32}\n$/);
    expect(run.stderr).toContain(`warning: ${orgId} has no plan: every call with this key is refused with client_not_configured until it has one (\`cli org set-plan ${orgId} standard\`).\n`);
    expect(await db('api_keys').where({ organization_id: orgId })).toHaveLength(1);
    // With a plan, no warning.
    const planned = (await cli('org', 'create', '--name', 'CLI with plan SRL')).stdout.trim();
    const ready = await cli('key', 'create', '--org', planned, '--name', 'ready');
    expect(ready.code, ready.stderr).toBe(0);
    expect(ready.stderr).not.toContain('warning');
  });

  it('when the organization does not exist then a one-line error and exit code 1', async () => {
    const run = await cli('key', 'create', '--org', 'org_doesnotexist', '--name', 'x');
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe('error (not_found): No organization with id or name "org_doesnotexist".');
    expect(run.stdout).toBe('');
  });

  it('when the name is typed in another case or spacing then the error names the organization it may mean, and nothing is done', async () => {
    const name = `CLI Case ${Date.now().toString(36)} SRL`;
    const orgId = (await cli('org', 'create', '--name', name)).stdout.trim();
    const typed = `  ${name.toLowerCase().replace(/ /g, '  ')}`;
    const run = await cli('key', 'create', '--org', typed, '--name', 'x');
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(`error (not_found): No organization with id or name "${typed}"; did you mean "${name}" (${orgId})?`);
    expect(await db('api_keys').where({ organization_id: orgId })).toHaveLength(0);
  });

  it('when a name is blank then a one-line invalid_params error names the field, and nothing is created', async () => {
    const orgId = (await cli('org', 'create', '--name', 'CLI blank names SRL')).stdout.trim();
    const [org, key] = await Promise.all([cli('org', 'create', '--name', '   '), cli('key', 'create', '--org', orgId, '--name', ' ')]);
    expect(org.code).toBe(1);
    expect(org.stderr.trim()).toBe('error (invalid_params): name: must not be empty');
    expect(org.stdout).toBe('');
    expect(key.code).toBe(1);
    expect(key.stderr.trim()).toBe('error (invalid_params): name: must not be empty');
    const count = async (rows: Promise<{ n: string | number }[]>) => Number((await rows)[0]!.n);
    expect(await count(db('organizations').whereRaw("btrim(name) = ''").count({ n: '*' }))).toBe(0);
    expect(await count(db('api_keys').where({ organization_id: orgId }).count({ n: '*' }))).toBe(0);
  });

  it('when --expires names a day that is not in the calendar then it is refused as such and no key is created', async () => {
    const orgId = (await cli('org', 'create', '--name', 'CLI impossible expiry SRL')).stdout.trim();
    const [feb30, apr31, feb29] = await Promise.all([
      cli('key', 'create', '--org', orgId, '--name', 'x', '--expires', '2099-02-30'),
      cli('key', 'create', '--org', orgId, '--name', 'x', '--expires', '2098-04-31T12:00:00Z'),
      cli('key', 'create', '--org', orgId, '--name', 'x', '--expires', '2097-02-29'),
    ]);
    for (const run of [feb30, apr31, feb29]) expect(run).toMatchObject({ code: 1, stdout: '' });
    expect(feb30.stderr).toContain("error: option '--expires <when>' argument '2099-02-30' is invalid. 2099-02-30 is not a date: February 2099 has days 01 to 28.");
    expect(apr31.stderr).toContain('2098-04-31 is not a date: April 2098 has days 01 to 30.');
    expect(feb29.stderr).toContain('2097-02-29 is not a date: February 2097 has days 01 to 28.');
    expect(Number((await db('api_keys').where({ organization_id: orgId }).count<{ n: string }[]>({ n: '*' }))[0]!.n)).toBe(0);

    // A leap day is a day: the key is valid through it, not into 1 March.
    const leap = await cli('key', 'create', '--org', orgId, '--name', 'leap', '--expires', '2096-02-29');
    expect(leap.code, leap.stderr).toBe(0);
    const stored = await db('api_keys').where({ organization_id: orgId }).first<{ expires_at: Date }>('expires_at');
    expect(stored!.expires_at.toISOString()).toBe('2096-02-29T23:59:59.999Z');
  });

  it('when --expires is a date then the key is valid through that day, UTC, as the dashboard makes it; a date-time is kept as given', async () => {
    const orgId = (await cli('org', 'create', '--name', 'CLI expiry day SRL')).stdout.trim();
    const today = new Date().toISOString().slice(0, 10);
    const [day, instant] = await Promise.all([
      cli('key', 'create', '--org', orgId, '--name', 'through today', '--expires', today),
      cli('key', 'create', '--org', orgId, '--name', 'at noon', '--expires', '2031-05-01T12:00:00Z'),
    ]);
    expect(day.code, day.stderr).toBe(0);
    expect(instant.code, instant.stderr).toBe(0);
    const expiries = Object.fromEntries((await db('api_keys').where({ organization_id: orgId }).select<{ name: string; expires_at: Date }[]>('name', 'expires_at')).map((k) => [k.name, k.expires_at.toISOString()]));
    expect(expiries).toEqual({ 'through today': `${today}T23:59:59.999Z`, 'at noon': '2031-05-01T12:00:00.000Z' });
  });

  it('when --expires is a date-time without a zone, or a date with text after it, then it is refused naming the forms; with an offset it is that instant, whatever TZ says', async () => {
    const orgId = (await cli('org', 'create', '--name', 'CLI expiry zone SRL')).stdout.trim();
    const inRome = (...args: string[]) => runCliWithEnv({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'error', TZ: 'Europe/Rome' }, ...args);
    const forms = 'must be a date, YYYY-MM-DD (valid through that day, UTC), or an ISO 8601 date-time with Z or an offset, e.g. 2027-01-31T12:00:00Z or 2027-01-31T12:00:00+01:00.';
    const [local, note, offset, utc] = await Promise.all([
      inRome('key', 'create', '--org', orgId, '--name', 'local', '--expires', '2097-01-01T10:00'),
      inRome('key', 'create', '--org', orgId, '--name', 'note', '--expires', '2097-01-01 (note)'),
      inRome('key', 'create', '--org', orgId, '--name', 'offset', '--expires', '2097-01-01T10:00+01:00'),
      inRome('key', 'create', '--org', orgId, '--name', 'utc', '--expires', '2097-01-01T10:00Z'),
    ]);
    expect(local).toMatchObject({ code: 1, stdout: '' });
    expect(local.stderr).toContain(`error: option '--expires <when>' argument '2097-01-01T10:00' is invalid. ${forms}`);
    expect(note).toMatchObject({ code: 1, stdout: '' });
    expect(note.stderr).toContain(`error: option '--expires <when>' argument '2097-01-01 (note)' is invalid. ${forms}`);
    expect(offset.code, offset.stderr).toBe(0);
    expect(utc.code, utc.stderr).toBe(0);
    const expiries = Object.fromEntries((await db('api_keys').where({ organization_id: orgId }).select<{ name: string; expires_at: Date }[]>('name', 'expires_at')).map((k) => [k.name, k.expires_at.toISOString()]));
    expect(expiries).toEqual({ offset: '2097-01-01T09:00:00.000Z', utc: '2097-01-01T10:00:00.000Z' });
  });

  it('when a limit is above what the store holds then set-limits names the limit in one line, not SQL, and nothing changes', async () => {
    const orgId = (await cli('org', 'create', '--name', 'CLI huge limits SRL')).stdout.trim();
    const [burst, perSecond] = await Promise.all([
      cli('org', 'set-limits', orgId, '--burst', '3000000000'),
      cli('org', 'set-limits', orgId, '--per-second', '99999999999999999'),
    ]);
    expect(burst).toMatchObject({ code: 1, stdout: '', stderr: "error: option '--burst <n>' argument '3000000000' is invalid. must be at most 2147483647.\n(see: cli org set-limits --help)\n" });
    expect(perSecond).toMatchObject({ code: 1, stdout: '', stderr: "error: option '--per-second <n>' argument '99999999999999999' is invalid. must be at most 2147483647.\n(see: cli org set-limits --help)\n" });
    const shown = await cli('org', 'show', orgId);
    expect(shown.stdout).not.toContain('(override)');
  });

  it('when set-limits would put the burst or the per-minute limit below the per-second one, here or with the plan\'s, then it is refused naming each, and nothing changes', async () => {
    const orgId = (await cli('org', 'create', '--name', 'CLI contradictory limits SRL')).stdout.trim();
    const both = await cli('org', 'set-limits', orgId, '--per-second', '10', '--burst', '5', '--per-minute', '3');
    expect(both).toMatchObject({ code: 1, stdout: '' });
    expect(both.stderr.trim()).toBe('error (invalid_params): burst: must be at least the per-second limit (10); perMinute: must be at least the per-second limit (10)');
    // The standard plan's burst is 40: a rate of 50 a second alone contradicts it.
    const overPlan = await cli('org', 'set-limits', orgId, '--per-second', '50');
    expect(overPlan).toMatchObject({ code: 1, stdout: '' });
    expect(overPlan.stderr.trim()).toBe('error (invalid_params): burst: must be at least the per-second limit (50)');
    expect((await cli('org', 'show', orgId)).stdout).not.toContain('(override)');
    expect(await db('audit_log').where({ organization_id: orgId, action: 'organization.limits_set' })).toEqual([]);
    // With a burst to match, it is saved.
    const saved = await cli('org', 'set-limits', orgId, '--per-second', '50', '--burst', '50');
    expect(saved).toMatchObject({ code: 0, stdout: `${orgId}: per-second 50, burst 50, per-minute plan\n` });
  });

  it('when --help is asked of a subcommand then it prints usage and exits 0', async () => {
    const run = await cli('key', 'create', '--help');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('--expires <when>');
  });
});

describe('operator CLI: an organization name that is taken', () => {
  const organizationsNamed = async (name: string) =>
    (await db('organizations').whereRaw("lower(btrim(regexp_replace(name, '\\s+', ' ', 'g'))) = lower(?)", [name]).orderBy('created_at').select<{ id: string }[]>('id')).map((o) => o.id);
  const takenLine = (name: string, id: string) =>
    `error (invalid_params): An organization named "${name}" already exists (${id}). Use that one (cli org show ${id}), or pass --allow-duplicate-name to create another.\n`;

  it('when org create is run again with the same name, or one differing only in case and spaces, then it is refused naming the organization there is, and nothing is made', async () => {
    const token = randomUUID().slice(0, 8);
    const name = `CLI retried ${token} SRL`;
    const first = await cli('org', 'create', '--name', name);
    expect(first.code, first.stderr).toBe(0);
    const id = first.stdout.trim();
    const variants = [name, `  ${name.toLowerCase()} `, name.toUpperCase().replaceAll(' ', '   ')];
    const runs = await Promise.all(variants.map((variant) => cli('org', 'create', '--name', variant)));
    for (const [i, run] of runs.entries()) expect(run, variants[i]).toEqual({ code: 1, stdout: '', stderr: takenLine(name, id) });
    expect(await organizationsNamed(name)).toEqual([id]);
    const created = await db('audit_log').where({ action: 'organization.created' }).whereRaw("details->>'name' ILIKE ?", [`%${token}%`]).count<{ n: string }[]>({ n: '*' });
    expect(Number(created[0]!.n)).toBe(1);
    // A name that merely starts the same is another name.
    expect((await cli('org', 'create', '--name', `${name} Bis`)).code).toBe(0);
  });

  it('when --allow-duplicate-name is given then a second organization of that name is made, and its id printed', async () => {
    const name = `CLI meant twin ${randomUUID().slice(0, 8)} SRL`;
    const first = (await cli('org', 'create', '--name', name)).stdout.trim();
    const second = await cli('org', 'create', '--name', ` ${name.toLowerCase()}`, '--allow-duplicate-name');
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout.trim()).toMatch(/^org_[0-9A-Za-z]+$/);
    expect(await organizationsNamed(name)).toEqual([first, second.stdout.trim()]);
  });

  it('when two runs create the same name at once (a script retried while the first still runs), then one organization is made and the other run is refused naming it', async () => {
    const name = `CLI racing ${randomUUID().slice(0, 8)} SRL`;
    const runs = await Promise.all([cli('org', 'create', '--name', name), cli('org', 'create', '--name', name)]);
    const made = await organizationsNamed(name);
    expect(made).toHaveLength(1);
    expect(runs.map((r) => r.code).sort()).toEqual([0, 1]);
    expect(runs.find((r) => r.code === 0)!.stdout.trim()).toBe(made[0]);
    expect(runs.find((r) => r.code === 1)!.stderr).toBe(takenLine(name, made[0]!));
  });
});

describe('operator CLI: what a mistyped argument is told', () => {
  it('when a plan, an option, a key or an organization name is not one it can use, then the error names what there is, never echoing a key; and the key itself revokes that key', async () => {
    await ensureDefaultPlans(db);
    const org = await createOrganization(db, { name: `Typo ${Date.now()} SRL`, planId: 'standard' });
    const dupName = `Twin ${Date.now()} SRL`;
    const twins = [await createOrganization(db, { name: dupName, planId: 'standard' }), await createOrganization(db, { name: dupName, planId: 'standard' })];
    const { key: leaked, record } = await createApiKey(db, { organizationId: org.id, name: 'leaked', createdBy: 'test' });
    // Keys as they get pasted: from a request's header, with a space before or after.
    const pasted = await Promise.all(['Bearer %s', ' %s', '%s ', '"%s"'].map(async (shape, i) => {
      const { key: secret, record: pastedRecord } = await createApiKey(db, { organizationId: org.id, name: `pasted ${i}`, createdBy: 'test' });
      return { secret, record: pastedRecord, given: shape.replace('%s', secret) };
    }));
    const unknownKey = `sk_live_${'Q'.repeat(32)}`;
    const mistyped = `Bearer ${leaked.slice(0, -1)}`;
    const [badCreatePlan, badSetPlan, typo, unknownSecret, bySecret, twin, mistypedRun, ...pastedRuns] = await Promise.all([
      cli('org', 'create', '--name', 'Acme2', '--plan', 'premium'),
      cli('org', 'set-plan', org.id, 'premium'),
      cli('org', 'create', '--nam', 'X'),
      cli('key', 'revoke', unknownKey),
      cli('key', 'revoke', leaked),
      cli('org', 'show', dupName),
      cli('key', 'revoke', mistyped),
      ...pasted.map((p) => cli('key', 'revoke', p.given)),
    ]);
    // The plans there are (others' tests add their own), and where to read them.
    for (const run of [badCreatePlan, badSetPlan]) {
      expect(run).toMatchObject({ code: 1, stdout: '' });
      expect(run.stderr).toMatch(/^error \(not_found\): No plan "premium"; plans: (\S+, )*standard(, \S+)* \(cli plan list\)\.\n$/);
    }
    expect(Number((await db('organizations').where({ name: 'Acme2' }).count<{ count: string }[]>('* as count'))[0]!.count)).toBe(0);
    expect((await db('organizations').where({ id: org.id }).first('plan_id')).plan_id).toBe('standard');

    expect(typo).toMatchObject({ code: 1, stdout: '' });
    expect(typo.stderr).toMatch(/^error: unknown option '--nam'\n\(Did you mean --name\?\)\n/);

    expect(unknownSecret).toEqual({
      code: 1,
      stdout: '',
      stderr: 'error (not_found): No API key is this key (not shown here): give the key as it was created, or its id (key_…) from `cli key list --org ORG`.\n',
    });
    expect(bySecret.code, bySecret.stderr).toBe(0);
    expect(bySecret.stdout).toMatch(new RegExp(`^${record.id} revoked at `));
    expect(bySecret.stderr).toBe(`(found by the key itself: ${record.prefix}…, of ${org.id})\n`);
    expect(bySecret.stdout + bySecret.stderr).not.toContain(leaked);
    expect((await db('api_keys').where({ id: record.id }).first('revoked_at')).revoked_at).not.toBeNull();
    // A pasted key revokes that key, and is not echoed; a mistyped one (most of a real key) is
    // not found, and not echoed either.
    for (const [i, run] of pastedRuns.entries()) {
      const { secret, record: pastedRecord, given } = pasted[i]!;
      expect(run.code, `${JSON.stringify(given)}: ${run.stderr}`).toBe(0);
      expect(run.stdout).toMatch(new RegExp(`^${pastedRecord.id} revoked at `));
      expect(run.stdout + run.stderr).not.toContain(secret.slice(12));
    }
    expect(mistypedRun).toEqual({ code: 1, stdout: '', stderr: unknownSecret.stderr });

    expect(twin).toEqual({ code: 1, stdout: '', stderr: `error (invalid_params): More than one organization is named "${dupName}" (${twins[0]!.id}, ${twins[1]!.id}): use its id.\n` });
  }, 120_000);
});
