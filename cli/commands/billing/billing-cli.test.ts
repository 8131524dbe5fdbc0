import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { periodOf } from '../../../core/billing/billing-period.js';
import { applyUsageBatch, ledgerColumns } from '../../../core/billing/index.js';
import { createDb, migrateLatest, type Db } from '../../../core/db/index.js';
import { createScratchDatabase } from '../../../test/support/database.js';
import { runCli } from '../../../test/support/run-cli.js';

// The finance and operator commands as people type them: `billing grant|top-up|adjust|set-cap`,
// `ledger export`, `reconcile`. Each test makes an organization of its own (plan standard).
const databaseUrl = inject('databaseUrl');
let db: Db;


const cli = (...args: string[]) => runCli(databaseUrl, ...args);

async function newOrganization(): Promise<string> {
  const created = await cli('org', 'create', '--name', `Billing CLI ${randomUUID()} SRL`);
  expect(created.code, created.stderr).toBe(0);
  return created.stdout.trim();
}

const ledgerRows = async (organizationId: string) => Number((await db('usage_ledger').where({ organization_id: organizationId }).count<{ n: string }[]>({ n: '*' }))[0]!.n);

beforeAll(() => {
  db = createDb({ connectionString: databaseUrl, poolMax: 2 });
});
afterAll(async () => {
  await db.destroy();
});

describe('billing CLI: credits, caps, ledger export and reconcile', () => {
  it('when credits are granted, topped up and adjusted, then each is a ledger row with who and why, exported as CSV and as JSON in the same column order', async () => {
    const org = await newOrganization();
    const opening = (await db('allowances').where({ organization_id: org }).first<{ credits_balance: number }>('credits_balance'))!.credits_balance;

    const grant = await cli('billing', 'grant', '--org', org, '--credits', '100', '--reason', 'contract bonus, Q4');
    expect(grant.code, grant.stderr).toBe(0);
    expect(grant.stdout).toContain(`${org} ${periodOf(new Date())}: ${opening + 100} credits`);
    expect((await cli('billing', 'top-up', '--org', org, '--credits', '50', '--reason', 'invoice 2026-118')).code).toBe(0);
    const adjust = await cli('billing', 'adjust', '--org', org, '--credits', '-30', '--reason', 'refund correction');
    expect(adjust.stdout).toContain(`: ${opening + 120} credits`);

    const period = periodOf(new Date());
    const csv = await cli('ledger', 'export', '--org', org, '--period', period);
    expect(csv.code, csv.stderr).toBe(0);
    // RFC 4180: every line, the last too, ends in CR LF.
    expect(csv.stdout.endsWith('\r\n')).toBe(true);
    const lines = csv.stdout.slice(0, -2).split('\r\n');
    expect(lines[0]).toBe(ledgerColumns.join(','));
    // The plan's opening grant, then ours, oldest first; a reason with a comma is quoted.
    expect(lines.slice(2).map((l) => l.split(',')[2])).toEqual(['grant', 'top_up', 'adjustment']);
    expect(lines[2]).toMatch(/,cli:operator,"contract bonus, Q4",$/);
    expect(lines[4]).toMatch(/,adjustment,admin,,,30,credits,-30,0,\d+,/);

    const json = await cli('ledger', 'export', '--org', org, '--period', period, '--format', 'json');
    const entries = JSON.parse(json.stdout) as Record<string, unknown>[];
    expect(entries).toHaveLength(4);
    expect(Object.keys(entries[3]!)).toEqual([...ledgerColumns]);
    expect(entries[3]).toMatchObject({ entryType: 'adjustment', creditsDelta: -30, creditsBalanceAfter: opening + 120, actor: 'cli:operator', reason: 'refund correction' });

    const audit = await db('audit_log').where({ organization_id: org }).orderBy('id').select<{ action: string; details: Record<string, unknown> }[]>('action', 'details');
    expect(audit.slice(-3)).toEqual([
      { action: 'credits.grant', details: { credits: 100, reason: 'contract bonus, Q4' } },
      { action: 'credits.top_up', details: { credits: 50, reason: 'invoice 2026-118' } },
      { action: 'credits.adjustment', details: { credits: -30, reason: 'refund correction' } },
    ]);

    const reconcile = await cli('reconcile', '--org', org);
    expect(reconcile.code).toBe(0);
    expect(reconcile.stdout).toBe('checked 1 organization, 4 ledger rows\nno differences\n');

    // No call yet: the report's "as of" says so for the month asked, a closed one too.
    const report = await cli('report', '--org', org, '--period', period);
    expect(report.code, report.stderr).toBe(0);
    expect(report.stdout).toContain(`As of: no usage counted in ${period}; generated `);
  });

  it('when a cap is set and then lifted with `--calls none`, then the allowance has no cap and both changes are on the ledger', async () => {
    const org = await newOrganization();
    const set = await cli('billing', 'set-cap', '--org', org, '--calls', '500', '--reason', 'trial');
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain('calls used of 500;');
    // The plan's 100,000 included credits less 99,999: "1 credit", in the singular.
    const one = await cli('billing', 'adjust', '--org', org, '--credits', '-99999', '--reason', 'down to one');
    expect(one.stdout).toContain(`${org} ${new Date().toISOString().slice(0, 7)}: 1 credit, 0 calls used of 500;`);
    const lifted = await cli('billing', 'set-cap', '--org', org, '--calls', 'none', '--reason', 'enterprise contract');
    expect(lifted.code, lifted.stderr).toBe(0);
    expect(lifted.stdout).toContain('calls used of no cap;');
    expect((await db('allowances').where({ organization_id: org }).first<{ calls_cap: number | null }>('calls_cap'))!.calls_cap).toBeNull();
    const reasons = await db('usage_ledger').where({ organization_id: org, entry_type: 'cap_change' }).orderBy('id').pluck('reason');
    expect(await db('usage_ledger').where({ organization_id: org, entry_type: 'cap_change' }).pluck('event_id')).toEqual([expect.stringMatching(/^cap_/), expect.stringMatching(/^cap_/)]);
    expect(reasons).toHaveLength(2);
    expect(reasons[0]).toMatch(/^calls cap \d+ -> 500: trial$/);
    expect(reasons[1]).toBe('calls cap 500 -> none: enterprise contract');
    expect(await db('audit_log').where({ organization_id: org, action: 'allowance.cap_set' }).orderBy('id').pluck('details')).toEqual([
      { callsCap: 500, thisPeriodOnly: false, reason: 'trial' },
      { callsCap: null, thisPeriodOnly: false, reason: 'enterprise contract' },
    ]);
  });

  it('when set-cap is given the cap already set then it says so and writes no ledger or audit row; a cap that changes only later months still does', async () => {
    const org = await newOrganization();
    const capRows = () => db('usage_ledger').where({ organization_id: org, entry_type: 'cap_change' }).orderBy('applied_at').pluck('reason');
    const audits = async () => (await db('audit_log').where({ organization_id: org, action: 'allowance.cap_set' })).length;
    const first = await cli('billing', 'set-cap', '--org', org, '--calls', 'none', '--reason', 'unlimited deal');
    expect(first.code, first.stderr).toBe(0);
    const [rows, audited] = [await capRows(), await audits()];
    const again = await cli('billing', 'set-cap', '--org', org, '--calls', 'none', '--reason', 'unlimited deal');
    expect(again).toMatchObject({ code: 0, stdout: `${org}: the calls cap is already none: nothing changed, no ledger row written\n` });
    expect(await capRows()).toEqual(rows);
    expect(await audits()).toBe(audited);
    // This month only, then for later months too: the second changes the organization's own cap.
    expect((await cli('billing', 'set-cap', '--org', org, '--calls', '7', '--this-period-only', '--reason', 'x')).code).toBe(0);
    const thisMonth = await cli('billing', 'set-cap', '--org', org, '--calls', '7', '--this-period-only', '--reason', 'x');
    expect(thisMonth.stdout).toBe(`${org}: the calls cap is already 7 this month: nothing changed, no ledger row written\n${org}: later months: no cap (the organization's own)\n`);
    const later = await cli('billing', 'set-cap', '--org', org, '--calls', '7', '--reason', 'from now on');
    expect(later.stdout).toContain('used of 7');
    expect(await capRows()).toEqual([...rows, 'calls cap none -> 7 (this period only): x', 'calls cap 7 -> 7: from now on']);
  });

  it('when set-cap runs while an operator form holds the organization, then it waits for the form and both finish: no deadlock', async () => {
    const org = await newOrganization();
    // The operator's forms lock the organization, then its allowance. Hold the first lock as a
    // form does, start set-cap, and once it waits, take the second: had set-cap locked the
    // allowance first, the two would deadlock and PostgreSQL would end one of them.
    const form = await db.transaction();
    try {
      await form('organizations').where({ id: org }).forUpdate().first('id');
      const setCap = cli('billing', 'set-cap', '--org', org, '--calls', '9', '--reason', 'raced a form');
      const waiting = async () => Number((await db.raw(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
      )).rows[0].n);
      const deadline = Date.now() + 20_000;
      while ((await waiting()) === 0) {
        if (Date.now() > deadline) throw new Error('set-cap never waited for the organization row');
        await new Promise((r) => setTimeout(r, 50));
      }
      await form.raw("SET LOCAL lock_timeout = '5s'");
      await form('allowances').where({ organization_id: org }).forUpdate().first('calls_cap');
      await form.commit();
      const done = await setCap;
      expect(done.code, done.stderr).toBe(0);
    } finally {
      if (!form.isCompleted()) await form.rollback();
    }
    expect(await db('allowances').where({ organization_id: org }).first('calls_cap')).toEqual({ calls_cap: 9 });
  });

  it('when `set-cap --calls plan` follows a cap of the organization\'s own, then the plan\'s cap applies again, this month and later ones, with a ledger and an audit row; run again, it changes nothing', async () => {
    const org = await newOrganization();
    const caps = async () => ({
      ...(await db('organizations').where({ id: org }).first('calls_cap_per_period', 'calls_cap_own')),
      ...(await db('allowances').where({ organization_id: org }).first('calls_cap')),
    });
    const capRows = () => db('usage_ledger').where({ organization_id: org, entry_type: 'cap_change' }).orderBy('id').pluck('reason');
    const audits = () => db('audit_log').where({ organization_id: org, action: 'allowance.cap_plan' }).orderBy('id').pluck('details');
    expect((await cli('billing', 'set-cap', '--org', org, '--calls', '8', '--reason', 'deal: eight calls')).code).toBe(0);
    expect(await caps()).toEqual({ calls_cap_per_period: 8, calls_cap_own: true, calls_cap: 8 });
    const rows = await capRows();

    const back = await cli('billing', 'set-cap', '--org', org, '--calls', 'plan', '--reason', 'deal ended');
    expect(back.code, back.stderr).toBe(0);
    expect(back.stdout).toContain('0 calls used of 100000;');
    expect(back.stdout).toContain(`${org}: later months: 100000 calls per period (plan standard's)\n`);
    expect(await caps()).toEqual({ calls_cap_per_period: null, calls_cap_own: false, calls_cap: 100000 });
    expect(await capRows()).toEqual([...rows, 'calls cap 8 -> 100000: back to the cap of plan standard: deal ended']);
    expect(await audits()).toEqual([{ planId: 'standard', callsCap: 100000, reason: 'deal ended' }]);
    expect((await cli('org', 'show', org)).stdout).toContain("\ncap:      100000 calls per period (plan standard's)\n");

    const again = await cli('billing', 'set-cap', '--org', org, '--calls', 'plan', '--reason', 'deal ended');
    expect(again).toMatchObject({ code: 0, stdout: `${org}: already on the cap of plan standard, this month and later (100000 calls per period (plan standard's)): nothing changed, no ledger row written\n` });
    expect(await capRows()).toHaveLength(rows.length + 1);
    expect(await audits()).toHaveLength(1);

    // On the plan's cap for later months but not this one: this month's comes back to it.
    expect((await cli('billing', 'set-cap', '--org', org, '--calls', '5', '--this-period-only', '--reason', 'trial')).code).toBe(0);
    expect((await cli('billing', 'set-cap', '--org', org, '--calls', 'plan', '--reason', 'trial over')).code).toBe(0);
    expect(await caps()).toEqual({ calls_cap_per_period: null, calls_cap_own: false, calls_cap: 100000 });
    expect((await capRows()).slice(-1)).toEqual(['calls cap 5 -> 100000: back to the cap of plan standard: trial over']);

    // For this month alone, or without a plan, there is no plan's cap to go back to.
    const thisMonth = await cli('billing', 'set-cap', '--org', org, '--calls', 'plan', '--this-period-only', '--reason', 'x');
    expect(thisMonth.code).not.toBe(0);
    expect(thisMonth.stderr).toContain("--calls plan puts this period and later ones on the plan's cap: it takes no --this-period-only");
    const unprovisioned = (await cli('org', 'create', '--name', `Billing CLI ${randomUUID()} SRL`, '--plan', 'none')).stdout.trim();
    const noPlan = await cli('billing', 'set-cap', '--org', unprovisioned, '--calls', 'plan', '--reason', 'x');
    expect(noPlan.code).not.toBe(0);
    expect(noPlan.stderr).toContain(`${unprovisioned} has no plan, so no plan's calls cap to go back to: set a cap, or none.`);
    expect(await ledgerRows(unprovisioned)).toBe(0);
  });

  it('when a cap is set for this period only, then set-cap and org show name the organization\'s own cap beside this period\'s, and the rollover that ends it is a cap change on the ledger that reconcile and the report account for', async () => {
    const org = await newOrganization();
    expect((await cli('billing', 'set-cap', '--org', org, '--calls', '8', '--reason', 'deal: eight calls')).code).toBe(0);
    const thisMonth = await cli('billing', 'set-cap', '--org', org, '--calls', '12', '--this-period-only', '--reason', 'this month: twelve');
    expect(thisMonth.code, thisMonth.stderr).toBe(0);
    expect(thisMonth.stdout).toContain('0 calls used of 12;');
    expect(thisMonth.stdout).toContain(`${org}: later months: 8 calls per period (the organization's own)\n`);
    const shown = await cli('org', 'show', org);
    expect(shown.stdout).toContain("\ncap:      8 calls per period (the organization's own); this period: 12, set for this period only\n");
    expect(shown.stdout).toContain('0 calls used of 12\n');

    // The next month (the allowance moved back one, as if a month had passed).
    const now = new Date();
    const lastMonth = periodOf(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 15)));
    const current = periodOf(now);
    await db('allowances').where({ organization_id: org }).update({ period: lastMonth });
    expect((await cli('billing', 'rollover')).code).toBe(0);
    expect((await db('allowances').where({ organization_id: org }).first<{ calls_cap: number }>('calls_cap'))!.calls_cap).toBe(8);
    const after = await cli('org', 'show', org);
    expect(after.stdout).toContain("\ncap:      8 calls per period (the organization's own)\n");
    expect(after.stdout).toContain('0 calls used of 8\n');

    const exported = JSON.parse((await cli('ledger', 'export', '--org', org, '--period', current, '--format', 'json')).stdout) as Record<string, unknown>[];
    const reason = `calls cap 12 -> 8: period rollover to ${current}: the organization's own cap`;
    expect(exported.filter((e) => e.source === 'system')).toMatchObject([
      { entryType: 'period_rollover', actor: 'system' },
      { eventId: `cap_rollover_${org}_${current}`, entryType: 'cap_change', quantity: 0, creditsDelta: 0, callsDelta: 0, actor: 'system', reason },
    ]);
    const reconcile = await cli('reconcile', '--org', org);
    expect(reconcile.stdout).toContain('no differences');
    expect(reconcile.code).toBe(0);
    const report = await cli('report', '--org', org, '--period', current);
    expect(report.stdout).toMatch(new RegExp(`cap_change\\s+0\\s+system\\s+-\\s+${reason.replace(/[()]/g, '\\$&')}`));
    // A second rollover run finds nothing to do and writes nothing.
    const rows = await ledgerRows(org);
    expect((await cli('billing', 'rollover')).code).toBe(0);
    expect(await ledgerRows(org)).toBe(rows);
  });

  it('when a number is written with thousands separators, then it is refused with the reason (1.000 is a thousand in Italian, one in English) and nothing is written', async () => {
    const org = await newOrganization();
    const before = await ledgerRows(org);
    const digitsOnly = 'Write it in digits only, e.g. 1000: 1.000 is a thousand in Italian but one in English, so separators are not read.';
    const cases: [string[], string][] = [
      [['billing', 'grant', '--org', org, '--credits', '1.000', '--reason', 'x'], `argument '1.000' is invalid. must be a positive whole number. ${digitsOnly}`],
      [['billing', 'top-up', '--org', org, '--credits', '2,000', '--reason', 'x'], `argument '2,000' is invalid. must be a positive whole number. ${digitsOnly}`],
      [['billing', 'adjust', '--org', org, '--credits', '-1.000', '--reason', 'x'], `argument '-1.000' is invalid. must be a non-zero whole number (negative removes credits). ${digitsOnly}`],
      [['billing', 'set-cap', '--org', org, '--calls', '1 000', '--reason', 'x'], `argument '1 000' is invalid. must be a whole number of calls (0 or more), "none" for no cap, or "plan" for the plan's cap. ${digitsOnly}`],
      [['billing', 'top-up', '--org', org, '--credits', '1.5', '--reason', 'x'], `argument '1.5' is invalid. must be a positive whole number. ${digitsOnly}`],
    ];
    const results = await Promise.all(cases.map(([args]) => cli(...args)));
    for (const [i, [args, message]] of cases.entries()) {
      expect(results[i]!.code, args.join(' ')).not.toBe(0);
      expect(results[i]!.stderr, args.join(' ')).toContain(message);
    }
    // Digits alone, as the dashboard's forms take them too.
    expect((await cli('billing', 'grant', '--org', org, '--credits', '1000', '--reason', 'a thousand')).code).toBe(0);
    expect(await ledgerRows(org)).toBe(before + 1);
  });

  it('when a top-up is run again with the same --reference, then the second run changes nothing and says so; the same reference for another amount is refused', async () => {
    const org = await newOrganization();
    const balance = async () => (await db('allowances').where({ organization_id: org }).first<{ credits_balance: number }>('credits_balance'))!.credits_balance;
    const rowsBefore = await ledgerRows(org);
    const opening = await balance();
    const topUp = (credits: string, reference: string) => cli('billing', 'top-up', '--org', org, '--credits', credits, '--reason', 'invoice paid', '--reference', reference);

    const first = await topUp('50', 'INV 2026-118');
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).not.toContain('already');
    // A retried script: twice more, two of them at once.
    const again = await Promise.all([topUp('50', ' INV 2026-118 '), topUp('50', 'INV 2026-118')]);
    for (const run of again) {
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/^already on the ledger since \d{4}-\d\d-\d\dT[\d:.]+Z under reference INV 2026-118: nothing changed, no ledger row written\n/);
      expect(run.stdout).toContain(`: ${opening + 50} credits`);
    }
    expect(await balance()).toBe(opening + 50);
    expect(await ledgerRows(org)).toBe(rowsBefore + 1);
    expect(await db('usage_ledger').where({ organization_id: org, entry_type: 'top_up' }).pluck('event_id')).toEqual([`top_ref_${org}_INV 2026-118`]);
    expect(await db('audit_log').where({ organization_id: org, action: 'credits.top_up' }).pluck('details')).toEqual([{ credits: 50, reason: 'invoice paid', reference: 'INV 2026-118' }]);

    const other = await topUp('500', 'INV 2026-118');
    expect(other.code).not.toBe(0);
    expect(other.stderr).toMatch(new RegExp(`error \\(invalid_params\\): top_ref_${org}_INV 2026-118 is already on the ledger for a top_up of 50 credits \\(.+\\): a different change needs a reference of its own`));
    // The reference belongs to one kind of change: a grant under it is a change of its own.
    expect((await cli('billing', 'grant', '--org', org, '--credits', '5', '--reason', 'bonus', '--reference', 'INV 2026-118')).code).toBe(0);
    expect(await balance()).toBe(opening + 55);
    // The export shows each reference in a column of its own, besides the event id.
    const exported = JSON.parse((await cli('ledger', 'export', '--org', org, '--period', periodOf(new Date()), '--format', 'json')).stdout) as { entryType: string; reference: string | null }[];
    expect(exported.map((e) => [e.entryType, e.reference])).toEqual([['grant', null], ['top_up', 'INV 2026-118'], ['grant', 'INV 2026-118']]);

    for (const [reference, message] of [['  ', 'must not be empty'], ['a\tb', 'must not contain line breaks'], ['x'.repeat(101), 'must be at most 100 characters']]) {
      const bad = await topUp('5', reference!);
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toContain(`error (invalid_params): The reference ${message}`);
    }
    expect(await balance()).toBe(opening + 55);
  });

  it('when an input is malformed, then the command says which and why, exits non-zero and writes nothing', async () => {
    const org = await newOrganization();
    const before = await ledgerRows(org);
    const cases: [string[], RegExp][] = [
      [['billing', 'grant', '--org', org, '--credits', '-5', '--reason', 'x'], /'--credits <n>' argument '-5' is invalid\. must be a positive whole number/],
      [['billing', 'top-up', '--org', org, '--credits', '1.5', '--reason', 'x'], /argument '1\.5' is invalid/],
      [['billing', 'grant', '--org', org, '--credits', '5'], /required option '--reason <text>' not specified/],
      [['billing', 'adjust', '--org', org, '--credits', '0', '--reason', 'x'], /must be a non-zero whole number/],
      [['billing', 'set-cap', '--org', org, '--calls', '-1', '--reason', 'x'], /'--calls <n\|none\|plan>' argument '-1' is invalid/],
      [['billing', 'set-cap', '--org', org, '--calls', 'lots', '--reason', 'x'], /argument 'lots' is invalid\. must be a whole number of calls \(0 or more\), "none" for no cap, or "plan" for the plan's cap/],
      [['billing', 'top-up', '--org', org, '--credits', '99999999999999999999', '--reason', 'x'], /argument '99999999999999999999' is invalid\. must be at most 9007199254740991\.$/m],
      [['billing', 'set-cap', '--org', org, '--calls', '99999999999999999999', '--reason', 'x'], /'--calls <n\|none\|plan>' argument '99999999999999999999' is invalid\. must be at most 9007199254740991\.$/m],
      [['billing', 'adjust', '--org', org, '--credits', '-99999999999999999999', '--reason', 'x'], /argument '-99999999999999999999' is invalid\. must be from -9007199254740991 to 9007199254740991\.$/m],
      [['billing', 'grant', '--org', 'No Such Company SRL', '--credits', '5', '--reason', 'x'], /error \(not_found\): No organization with id or name "No Such Company SRL"/],
      [['billing', 'top-up', '--org', org, '--credits', '9007199254740991', '--reason', 'x'], /error \(invalid_params\): the balance would be more than 9007199254740991 credits/],
      [['ledger', 'export', '--org', org, '--period', '9999-12'], /argument '9999-12' is invalid\. must be a month, YYYY-MM \(UTC\), from 1970-01 to 9998-12/],
      [['ledger', 'export', '--org', org, '--period', '2026-13'], /'--period <YYYY-MM>' argument '2026-13' is invalid\. must be a month/],
      [['report', '--org', org, '--period', '2999-01'], new RegExp(`error \\(invalid_params\\): 2999-01 has not begun: reports and exports cover months up to the current one, ${periodOf(new Date())} \\(UTC\\)`)],
      [['ledger', 'export', '--org', org, '--period', '2999-01'], /error \(invalid_params\): 2999-01 has not begun/],
      [['ledger', 'export', '--org', org, '--period', periodOf(new Date()), '--format', 'xml'], /argument 'xml' is invalid\. Allowed choices are csv, json/],
    ];
    const results = await Promise.all(cases.map(([args]) => cli(...args)));
    for (const [i, [args, message]] of cases.entries()) {
      const result = results[i]!;
      expect(result.code, args.join(' ')).not.toBe(0);
      expect(result.stderr, args.join(' ')).toMatch(message);
      expect(result.stdout, args.join(' ')).toBe('');
    }
    expect(await ledgerRows(org)).toBe(before);
    // Sixteen CLI processes at once: on two busy cores they took 54 s and more, past the
    // suite's 60 s, while each answer is checked in full above.
  }, 240_000);

  it('when an allowance disagrees with its ledger, then reconcile prints the difference and exits 1', async () => {
    const org = await newOrganization();
    await db('allowances').where({ organization_id: org }).increment('credits_balance', 7);
    const result = await cli('reconcile', '--org', org);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(new RegExp(`^${org}\\s+(\\d+)\\s+(\\d+)\\s+0\\s+0\\s+0\\s+0\\s+0\\s*$`, 'm'));
    const [, balance, ledger] = new RegExp(`^${org}\\s+(\\d+)\\s+(\\d+)`, 'm').exec(result.stdout)!;
    expect(Number(balance) - Number(ledger)).toBe(7);
    expect(result.stdout).toContain('1 organization(s) differ');
    expect(result.stdout).not.toContain('rebuild-usage-totals');
  });

  describe('dead letters', () => {
    // An event as the API writes it, for this organization.
    const event = (organizationId: string, overrides: Record<string, unknown> = {}) => ({
      v: 1, eventId: `req_${randomUUID()}`, organizationId, keyId: 'key_replay', source: 'api', product: 'company-financials', quantity: 5, unit: 'credits', occurredAt: new Date().toISOString(), ...overrides,
    });
    // A dead letter as the worker writes it.
    const deadLetter = async (d: Db, payload: unknown, reason: string) =>
      Number((await d('usage_dead_letters').insert({ bus: 'kafka', payload: typeof payload === 'string' ? payload : JSON.stringify(payload), reason }).returning('id'))[0]!.id);
    const balance = async (d: Db, organizationId: string) => (await d('allowances').where({ organization_id: organizationId }).first<{ credits_balance: number }>('credits_balance'))!.credits_balance;

    it('when dead letters are replayed by id, then what is billable now is charged once, the rest stays open with its reason, and the list shows both', async () => {
      const org = await newOrganization();
      const opening = await balance(db, org);
      // Refused by an older worker (offset times were not read then): billable now. Its event
      // also sits in a second dead letter (delivered twice), which must not charge it again.
      const offset = event(org, { occurredAt: new Date(Date.now() - 3_600_000).toISOString().replace('Z', '+00:00') });
      const charged = await deadLetter(db, offset, 'invalid usage event: occurredAt: Invalid ISO datetime (usage-events/0@1)');
      const again = await deadLetter(db, offset, 'invalid usage event: occurredAt: Invalid ISO datetime (usage-events/1@9)');
      const garbage = await deadLetter(db, `not an event ${randomUUID()}`, 'not JSON (usage-events/0@2)');
      const stranger = event(`org_missing_${randomUUID().slice(0, 8)}`);
      const unknown = await deadLetter(db, stranger, 'unknown organization (event x)');

      const listed = await cli('billing', 'dead-letters', '--limit', '1000');
      expect(listed.code, listed.stderr).toBe(0);
      for (const id of [charged, again, garbage, unknown]) expect(listed.stdout).toMatch(new RegExp(`^${id}\\s+\\S+\\s+kafka\\s+open\\s`, 'm'));

      const replay = await cli('billing', 'replay-dead-letters', '--id', String(charged), String(again), String(garbage), String(unknown));
      expect(replay.code, replay.stderr).toBe(1);
      expect(replay.stdout.trim().split('\n')).toEqual([
        `#${charged} charged ${offset.eventId}`,
        `#${again} already charged ${offset.eventId}`,
        '1 charged, 1 already charged, 2 still failing, 0 not open',
      ]);
      // Failures are messages: on stderr, as the README says.
      expect(replay.stderr.trim().split('\n')).toEqual([
        `#${garbage} still failing: not JSON`,
        `#${unknown} still failing ${stranger.eventId}: unknown organization ${stranger.organizationId}`,
      ]);
      expect(await balance(db, org)).toBe(opening - 5);
      expect(await db('usage_ledger').where({ event_id: offset.eventId }).select('organization_id', 'credits_delta')).toEqual([{ organization_id: org, credits_delta: -5 }]);
      const rows = await db('usage_dead_letters').whereIn('id', [charged, again, garbage, unknown]).orderBy('id').select('resolution', 'resolved_by', 'reason');
      expect(rows.map((r) => r.resolution)).toEqual(['replayed: charged', 'replayed: already in the ledger', null, null]);
      expect(rows[0].resolved_by).toMatch(/^cli:/);
      expect(rows[2].reason).toBe('not JSON (usage-events/0@2)');
      // A failed replay sets nothing aside again: still four rows for these payloads.
      expect(Number((await db('usage_dead_letters').where('payload', 'like', `%${stranger.eventId}%`).count<{ n: string }[]>({ n: '*' }))[0]!.n)).toBe(1);

      const audited = await db('audit_log').where({ organization_id: org, action: 'usage.dead_letter_replayed' }).select('actor', 'details');
      expect(audited).toEqual([{ actor: expect.stringMatching(/^cli:/), details: { eventId: offset.eventId, product: 'company-financials', quantity: 5, unit: 'credits', deadLetterId: charged } }]);

      const twice = await cli('billing', 'replay-dead-letters', '--id', String(charged));
      expect(twice.code).toBe(1);
      expect(twice.stderr).toBe(`#${charged} not open: no open dead letter has this id\n`);
      expect(twice.stdout).toBe('0 charged, 0 already charged, 0 still failing, 1 not open\n');
      expect(await balance(db, org)).toBe(opening - 5);
      const open = await cli('billing', 'dead-letters', '--limit', '1000');
      expect(open.stdout).not.toMatch(new RegExp(`^${charged}\\s`, 'm'));
      const all = await cli('billing', 'dead-letters', '--all', '--limit', '1000');
      expect(all.stdout).toMatch(new RegExp(`^${charged}\\s+\\S+\\s+kafka\\s+replayed: charged \\(cli:`, 'm'));
    });

    it('when every open dead letter is replayed with --all, then each is tried once, oldest first; without --id or --all the command refuses', async () => {
      // A database of its own: --all takes every open dead letter, other tests' included.
      const scratch = await createScratchDatabase('replay_all');
      const own = createDb({ connectionString: scratch.url, poolMax: 2 });
      try {
        await migrateLatest(own);
        const created = await runCli(scratch.url, 'org', 'create', '--name', 'Replay all SRL');
        expect(created.code, created.stderr).toBe(0);
        const org = created.stdout.trim();
        const opening = await balance(own, org);
        const ids = [];
        for (let i = 0; i < 3; i++) ids.push(await deadLetter(own, event(org), 'unknown organization (event x)'));
        const refused = await runCli(scratch.url, 'billing', 'replay-dead-letters');
        expect(refused.code).not.toBe(0);
        expect(refused.stderr).toContain('Give either --id <id...> or --all.');
        const all = await runCli(scratch.url, 'billing', 'replay-dead-letters', '--all');
        expect(all.code, all.stderr).toBe(0);
        expect(all.stdout.trim().split('\n').map((l) => l.split(' ').slice(0, 2).join(' '))).toEqual([...ids.map((id) => `#${id} charged`), '3 charged,']);
        expect(await balance(own, org)).toBe(opening - 15);
        expect((await runCli(scratch.url, 'billing', 'dead-letters')).stderr).toContain('no open dead letters');
        expect((await runCli(scratch.url, 'reconcile')).code).toBe(0);
      } finally {
        await own.destroy();
        await scratch.drop();
      }
    });
  });

  it('when the daily buckets and credits used drift from the ledger, then rebuild-usage-totals recomputes them, reconcile agrees again, and a second run changes nothing', async () => {
    const org = await newOrganization();
    const event = (product: string, quantity: number) => ({ v: 1, eventId: `req_${randomUUID()}`, organizationId: org, keyId: 'key_rebuild', source: 'api', product, quantity, unit: 'credits', occurredAt: new Date().toISOString() });
    const events = [event('company-financials', 5), event('company-profile', 8), event('company-financials', 5)];
    await db.transaction((trx) => applyUsageBatch(trx, events.map((value, i) => ({ value, ref: `test#${i}` })), { bus: 'postgres' }));
    // As a worker from before migration 015 would leave them: one bucket short, one missing.
    await db('usage_daily').where({ organization_id: org, product: 'company-financials' }).increment('quantity', 1);
    await db('usage_daily').where({ organization_id: org, product: 'company-profile' }).delete();
    await db('allowances').where({ organization_id: org }).update({ credits_used: 999 });
    const off = await cli('reconcile', '--org', org);
    expect(off.code).toBe(1);
    expect(off.stdout).toMatch(new RegExp(`^${org}\\s.*\\s999\\s+18\\s+2\\s*$`, 'm'));
    expect(off.stdout).toContain(`\`billing rebuild-usage-totals --org ${org}\` recomputes them from the ledger`);

    const rebuilt = await cli('billing', 'rebuild-usage-totals', '--org', org);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(rebuilt.stdout.trim()).toBe(`${org}: rebuilt from the ledger: 2 daily bucket(s) were off, credits used 999 → 18`);
    const reconciled = await cli('reconcile', '--org', org);
    expect(reconciled.code, reconciled.stdout).toBe(0);
    expect(await db('usage_daily').where({ organization_id: org }).orderBy('product').select('product', 'quantity', 'calls')).toEqual([
      { product: 'company-financials', quantity: 10, calls: 2 },
      { product: 'company-profile', quantity: 8, calls: 1 },
    ]);
    expect(await db('audit_log').where({ organization_id: org, action: 'usage.totals_rebuilt' }).pluck('details')).toEqual([{ bucketsOff: 2, creditsUsedBefore: 999, creditsUsedAfter: 18 }]);

    expect((await cli('billing', 'rebuild-usage-totals', '--org', org)).stdout.trim()).toBe(`${org}: already equal to the ledger`);
    const unknown = await cli('billing', 'rebuild-usage-totals', '--org', 'org_nobody_here');
    expect(unknown.code).not.toBe(0);
    expect(unknown.stdout).toBe('');
  });
});
