import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { periodOf } from '../../../core/billing/billing-period.js';
import { ledgerColumns } from '../../../core/billing/index.js';
import { createDb, type Db } from '../../../core/db/index.js';
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
    const lines = csv.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(ledgerColumns.join(','));
    // The plan's opening grant, then ours, oldest first; a reason with a comma is quoted.
    expect(lines.slice(2).map((l) => l.split(',')[2])).toEqual(['grant', 'top_up', 'adjustment']);
    expect(lines[2]).toMatch(/,cli:operator,"contract bonus, Q4"$/);
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
    expect(reconcile.stdout).toContain('no differences');
  });

  it('when a cap is set and then lifted with `--calls none`, then the allowance has no cap and both changes are on the ledger', async () => {
    const org = await newOrganization();
    const set = await cli('billing', 'set-cap', '--org', org, '--calls', '500', '--reason', 'trial');
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain('calls used of 500;');
    const lifted = await cli('billing', 'set-cap', '--org', org, '--calls', 'none', '--reason', 'enterprise contract');
    expect(lifted.code, lifted.stderr).toBe(0);
    expect(lifted.stdout).toContain('calls used of no cap;');
    expect((await db('allowances').where({ organization_id: org }).first<{ calls_cap: number | null }>('calls_cap'))!.calls_cap).toBeNull();
    const reasons = await db('usage_ledger').where({ organization_id: org, entry_type: 'adjustment' }).orderBy('id').pluck('reason');
    expect(reasons).toHaveLength(2);
    expect(reasons[0]).toMatch(/^calls cap \d+ -> 500: trial$/);
    expect(reasons[1]).toBe('calls cap 500 -> none: enterprise contract');
    expect(await db('audit_log').where({ organization_id: org, action: 'allowance.cap_set' }).orderBy('id').pluck('details')).toEqual([
      { callsCap: 500, thisPeriodOnly: false, reason: 'trial' },
      { callsCap: null, thisPeriodOnly: false, reason: 'enterprise contract' },
    ]);
  });

  it('when an input is malformed, then the command says which and why, exits non-zero and writes nothing', async () => {
    const org = await newOrganization();
    const before = await ledgerRows(org);
    const cases: [string[], RegExp][] = [
      [['billing', 'grant', '--org', org, '--credits', '-5', '--reason', 'x'], /'--credits <n>' argument '-5' is invalid\. must be a positive whole number/],
      [['billing', 'top-up', '--org', org, '--credits', '1.5', '--reason', 'x'], /argument '1\.5' is invalid/],
      [['billing', 'grant', '--org', org, '--credits', '5'], /required option '--reason <text>' not specified/],
      [['billing', 'adjust', '--org', org, '--credits', '0', '--reason', 'x'], /must be a non-zero whole number/],
      [['billing', 'set-cap', '--org', org, '--calls', '-1', '--reason', 'x'], /'--calls <n\|none>' argument '-1' is invalid/],
      [['billing', 'grant', '--org', 'No Such Company SRL', '--credits', '5', '--reason', 'x'], /error \(not_found\): No organization with id or name "No Such Company SRL"/],
      [['ledger', 'export', '--org', org, '--period', '2026-13'], /'--period <YYYY-MM>' argument '2026-13' is invalid\. must be a month/],
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
  });

  it('when an allowance disagrees with its ledger, then reconcile prints the difference and exits 1', async () => {
    const org = await newOrganization();
    await db('allowances').where({ organization_id: org }).increment('credits_balance', 7);
    const result = await cli('reconcile', '--org', org);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(new RegExp(`^${org}\\s+(\\d+)\\s+(\\d+)\\s+0\\s+0\\s+0\\s+0\\s+0\\s*$`, 'm'));
    const [, balance, ledger] = new RegExp(`^${org}\\s+(\\d+)\\s+(\\d+)`, 'm').exec(result.stdout)!;
    expect(Number(balance) - Number(ledger)).toBe(7);
    expect(result.stdout).toContain('1 organization(s) differ');
  });
});
