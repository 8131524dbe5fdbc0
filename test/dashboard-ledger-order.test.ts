import { describe, expect, inject, it } from 'vitest';
import { buildAllowanceReport, changeCredits, periodStart } from '../core/billing/index.js';
import type { UsageEvent } from '../core/usage/index.js';
import { runCli } from './support/run-cli.js';
import { adminOfNewOrg, applyBusEventsOf, createMember, dashboardForFile, httpSession, usageEventFor } from './dashboard-fixtures.js';

// The ledger page and its CSV over the real dashboard and Postgres, with usage applied late: the
// events wait on the Postgres bus (usage_bus_batches) and are applied by the worker's own code,
// after a top-up, though their calls were made before it. "Balance after" is the balance when a
// row was applied, so the rows must be listed in that order for it to chain.

const env = dashboardForFile();
const thisMonth = () => new Date().toISOString().slice(0, 7);

/** Publishes events to the Postgres bus as the API does (one batch row), then applies them as the billing worker does. */
async function applyLate(orgId: string, events: UsageEvent[]): Promise<void> {
  await env.db('usage_bus_batches').insert({ events: JSON.stringify(events), event_count: events.length });
  expect(await applyBusEventsOf(env.db, orgId)).toBe(events.length);
}

interface PageRow { applied: string; type: string; what: string; credits: number; balance: number | null; balanceCell: string }

const text = (cell: string) => cell.replace(/<br>/g, ' | ').replace(/<[^>]+>/g, '').replace(/&#39;/g, "'").replace(/\s+/g, ' ').trim();
const amount = (cell: string) => Number(text(cell).split(' | ')[0]!.replace(/[^\d-]/g, '') || 0);

/** The ledger table's rows as shown, top to bottom. */
function ledgerRows(html: string): PageRow[] {
  const table = html.slice(html.indexOf('id="ledger-table"'));
  const body = table.slice(table.indexOf('<tbody>'), table.indexOf('</tbody>'));
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map(([, tr]) => {
    const cells = [...tr!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((m) => m[1]!);
    return { applied: text(cells[0]!), type: text(cells[1]!), what: text(cells[2]!), credits: amount(cells[3]!), balance: text(cells[5]!) === '—' ? null : amount(cells[5]!), balanceCell: text(cells[5]!) };
  });
}

/** An organization (100,000 credits granted on creation), whose late calls are applied after a top-up of 1,000, and one late call of last month applied among them. */
async function organizationWithLateUsage(name: string) {
  const { orgId, client } = await adminOfNewOrg(env, name);
  const now = Date.now();
  const monthStart = periodStart(thisMonth()).getTime();
  // Calls made before the opening grant's time, within this month.
  const minutesAgo = (m: number) => new Date(Math.max(monthStart + 1_000, now - m * 60_000)).toISOString();
  const late = [usageEventFor(orgId, { occurredAt: minutesAgo(50) }), usageEventFor(orgId, { occurredAt: minutesAgo(40), source: 'mcp', product: 'service_search_companies', quantity: 1 })];
  await applyLate(orgId, late);
  await changeCredits(env.db, { organizationId: orgId, kind: 'top_up', credits: 1_000, actor: 'cli:maria', reason: 'invoice paid' });
  const lastMonth = usageEventFor(orgId, { occurredAt: new Date(monthStart - 2 * 3_600_000).toISOString() });
  const later = usageEventFor(orgId, { occurredAt: minutesAgo(30) });
  await applyLate(orgId, [lastMonth, later]);
  await applyLate(orgId, [usageEventFor(orgId)]);
  return { orgId, client, lastMonth };
}

describe('ledger order', () => {
  it('when usage is applied late, after a top-up, then the page lists rows in the order applied, each balance after following from the row below, and says when each late call was made', async () => {
    const { orgId, client } = await organizationWithLateUsage('Ledger late usage test');
    const month = ledgerRows(await (await client.get(`/orgs/${orgId}/ledger?period=${thisMonth()}`)).text());
    expect(month.map((r) => [r.type, r.credits])).toEqual([['Usage', -5], ['Usage', -5], ['Top-up', 1_000], ['Usage', -1], ['Usage', -5], ['Grant', 100_000]]);
    expect(month.map((r) => r.balance)).toEqual([100_979, 100_984, 100_994, 99_994, 99_995, 100_000]);
    for (let i = 0; i < month.length - 1; i++) {
      const [row, below] = [month[i]!, month[i + 1]!];
      if (i === 1) {
        // Last month's late call was applied just before this one: listed with its own month,
        // it moved the balance between the two rows, and the row says from what it went on.
        expect(row.balance! - row.credits).toBe(below.balance! - 5);
        expect(row.balanceCell).toBe('100,984 | before this row: 100,989');
      } else {
        expect(row.balance, `row ${i}`).toBe(below.balance! + row.credits);
        expect(row.balanceCell, `row ${i}`).not.toContain('before this row');
      }
    }
    // The late calls say when they were made; the others were applied as they happened.
    const callAt = (r: PageRow) => /call made (.+ UTC)$/.exec(r.applied)?.[1] ?? null;
    expect(month.map((r) => callAt(r) !== null)).toEqual([false, true, false, true, true, false]);
    expect(month[0]!.applied).toMatch(/^\d{1,2} \w{3,4} \d{4}, \d\d:\d\d UTC$/);

    // Every month: this month's rows as above, then last month's, whose late call says when it
    // was made. Applied after this month's opening grant, it is listed below it: the grant says
    // from what balance it went.
    const all = ledgerRows(await (await client.get(`/orgs/${orgId}/ledger`)).text());
    expect(all.slice(0, month.length - 1)).toEqual(month.slice(0, -1));
    expect(all[month.length - 1]).toEqual({ ...month.at(-1), balanceCell: '100,000 | before this row: 0' });
    expect(all.slice(month.length).map((r) => [r.type, r.credits, r.balance])).toEqual([['Usage', -5, 100_989]]);
    expect(all.at(-1)!.applied).toMatch(/ \| call made \d{1,2} \w{3,4} \d{4}, \d\d:\d\d UTC$/);

    client.jar.set('dash_lang', 'it');
    const italian = await (await client.get(`/orgs/${orgId}/ledger?period=${thisMonth()}`)).text();
    expect(italian).toContain('<th scope="col">Registrata</th>');
    expect(italian).toMatch(/chiamata del \d{1,2} \w{3,4} \d{4}, \d\d:\d\d UTC/);
    expect(italian).toContain('prima di questa riga: 100.989');
  });

  it('when usage is applied late then the CSV lists the month in the order applied, each balance after following from the row before, and the report\'s figures are the month\'s', async () => {
    const { orgId, lastMonth } = await organizationWithLateUsage('Ledger late usage CSV test');
    const finance = await createMember(env.db, orgId, 'finance');
    const client = httpSession(env.dashboard.url);
    await client.signIn(finance.email, finance.password);
    const csv = await (await client.get(`/orgs/${orgId}/ledger.csv?period=${thisMonth()}`)).text();
    expect(csv).toBe((await runCli(inject('databaseUrl'), 'ledger', 'export', '--org', orgId, '--period', thisMonth(), '--format', 'csv')).stdout);
    const [header, ...lines] = csv.trimEnd().split('\n');
    const column = (name: string) => header!.split(',').indexOf(name);
    const rows = lines.map((l) => l.split(','));
    const ids = rows.map((r) => Number(r[column('id')]));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    const balances = rows.map((r) => Number(r[column('creditsBalanceAfter')]));
    const deltas = rows.map((r) => Number(r[column('creditsDelta')]));
    expect(balances).toEqual([100_000, 99_995, 99_994, 100_994, 100_984, 100_979]);
    for (let i = 1; i < rows.length; i++) {
      // Between the top-up and the next row, last month's late call (-5), in last month's file.
      expect(balances[i], `row ${i}`).toBe(balances[i - 1]! + deltas[i]! - (i === 4 ? 5 : 0));
    }
    // occurredAt (when the call was made) is before appliedAt for the late calls.
    expect(rows.map((r) => r[column('occurredAt')]! < r[column('appliedAt')]!.slice(0, 19))).toEqual([false, true, true, false, true, false]);
    const previous = new Date(periodStart(thisMonth()).getTime() - 1).toISOString().slice(0, 7);
    const last = (await (await client.get(`/orgs/${orgId}/ledger.csv?period=${previous}`)).text()).trimEnd().split('\n');
    expect(last.slice(1).map((l) => l.split(',')[column('eventId')])).toEqual([lastMonth.eventId]);

    // The report counts each call in the month it was made, whatever the order applied.
    const report = await buildAllowanceReport(env.db, orgId, thisMonth());
    expect({ opening: report.openingBalance, used: report.credits.used, toppedUp: report.credits.toppedUp, closing: report.closingBalance }).toEqual({ opening: -5, used: 16, toppedUp: 1_000, closing: 100_979 });
    expect((await buildAllowanceReport(env.db, orgId, previous)).credits.used).toBe(5);
  });

  it('when a top-up was made with a reference then the ledger page shows it on the row, in English and Italian, and the CSV in a column of its own', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Ledger reference test');
    const run = await runCli(inject('databaseUrl'), 'billing', 'top-up', '--org', orgId, '--credits', '1000', '--reason', 'invoice paid', '--reference', 'FT 2026/117');
    expect(run.code, run.stderr).toBe(0);
    await changeCredits(env.db, { organizationId: orgId, kind: 'top_up', credits: 50, actor: 'cli:luca', reason: 'goodwill' });

    const page = ledgerRows(await (await client.get(`/orgs/${orgId}/ledger?type=top_up`)).text());
    expect(page.map((r) => r.what)).toEqual([expect.not.stringContaining('reference'), expect.stringMatching(/^invoice paid · cli:\S+ · reference FT 2026\/117$/)]);
    client.jar.set('dash_lang', 'it');
    expect(await (await client.get(`/orgs/${orgId}/ledger`)).text()).toContain('<span class="small">· riferimento FT 2026/117</span>');

    // Commas asked for: the page's language (Italian here) would give semicolons.
    const csv = (await (await client.get(`/orgs/${orgId}/ledger.csv?type=top_up&sep=comma`)).text()).trimEnd().split('\r\n');
    expect(csv[0]).toMatch(/,reason,reference$/);
    expect(csv.slice(1).map((l) => l.split(',').slice(-2))).toEqual([['invoice paid', 'FT 2026/117'], ['goodwill', '']]);
    // The event id keeps the reference as before.
    expect(csv[1]).toContain(`,top_ref_${orgId}_FT 2026/117,`);
  });
});
