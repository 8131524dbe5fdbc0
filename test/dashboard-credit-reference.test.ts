import { describe, expect, inject, it } from 'vitest';
import { periodOf } from '../core/billing/billing-period.js';
import { createOrganization } from '../core/billing/index.js';
import { runCli } from './support/run-cli.js';
import { dashboardForFile, signedInOperator } from './dashboard-fixtures.js';

// A credit change's reference (an invoice number) over the real dashboard, Postgres and CLI: the
// operator's credits form takes one with the CLI's `--reference` semantics (once per reference,
// another amount refused), and the report (page, CSV, the CLI's table and JSON) and the Activity
// page show it, not only the ledger page. The reference starts with "-" and holds a ";", so the
// CSV must neutralise it as it does reasons (a spreadsheet would run it as a formula).

const env = dashboardForFile();
const REFERENCE = '-INV;2026/117';

type Client = Awaited<ReturnType<typeof signedInOperator>>;

const count = async (table: string, where: Record<string, unknown>) => Number((await env.db(table).where(where).count<{ n: string }[]>({ n: '*' }))[0]!.n);
const balanceOf = async (orgId: string) => Number((await env.db('allowances').where({ organization_id: orgId }).first('credits_balance')).credits_balance);

/** The credits form as the page draws it (its CSRF and a fresh submission token), with what is typed. */
async function creditsForm(client: Client, orgId: string, typed: Record<string, string>) {
  const page = `/operator/organizations/${orgId}`;
  return { ...(await client.hiddenFields(page, `${page}/credits`)), kind: 'top_up', reason: 'invoice paid', ...typed };
}

const send = async (client: Client, orgId: string, form: Record<string, string>) => {
  const res = await client.post(`/operator/organizations/${orgId}/credits`, form);
  return { status: res.status, body: await res.text() };
};

describe('when an operator tops up from the credits form with a reference', () => {
  it('then it is booked once per reference, as the CLI books it, another amount under it is refused under the field, and a double-click is still answered as one', async () => {
    const { id: orgId } = await createOrganization(env.db, { name: 'Form reference test', planId: 'standard' });
    const client = await signedInOperator(env);
    const pageHtml = await (await client.get(`/operator/organizations/${orgId}`)).text();
    expect(pageHtml).toContain('<label for="grant-reference">Reference (optional)</label>');
    const opening = await balanceOf(orgId);

    // Typed with spaces around it: trimmed, as the CLI trims it.
    const first = await send(client, orgId, await creditsForm(client, orgId, { credits: '1000', reference: ` ${REFERENCE} ` }));
    expect(first.status).toBe(200);
    expect(first.body).toContain(`Credits changed: balance now ${(opening + 1000).toLocaleString('en')}.`);
    // The CLI's event id: `billing top-up --reference` with it books nothing more.
    expect(await env.db('usage_ledger').where({ organization_id: orgId, entry_type: 'top_up' }).pluck('event_id')).toEqual([`top_ref_${orgId}_${REFERENCE}`]);
    expect(await env.db('audit_log').where({ organization_id: orgId, action: 'credits.top_up' }).pluck('details')).toEqual([{ credits: 1000, reason: 'invoice paid', reference: REFERENCE }]);

    // The same reference in a form drawn afresh (another operator, a second tab): nothing booked, and it says so.
    const again = await send(client, orgId, await creditsForm(client, orgId, { credits: '1000', reference: REFERENCE }));
    expect(again.status).toBe(200);
    expect(again.body).toMatch(new RegExp(`Already on the ledger since [^<]+ under reference ${REFERENCE}: nothing changed, no credits booked again\\. Balance: ${(opening + 1000).toLocaleString('en')}\\.`));
    client.jar.set('dash_lang', 'it');
    const againIt = await send(client, orgId, await creditsForm(client, orgId, { credits: '1000', reference: REFERENCE }));
    expect(againIt.body).toMatch(new RegExp(`Già nel registro dal [^<]+ con il riferimento ${REFERENCE}: non è cambiato nulla, nessun credito registrato di nuovo\\. Saldo: ${(opening + 1000).toLocaleString('it')}\\.`));
    client.jar.set('dash_lang', 'en');

    // Another amount under it: refused under the field, the form as typed, nothing booked.
    const other = await send(client, orgId, await creditsForm(client, orgId, { credits: '500', reference: REFERENCE }));
    expect(other.status).toBe(422);
    expect(other.body).toContain('Reference (optional): already used for a different change: a different change needs a reference of its own');
    expect(other.body).toContain('<p class="field-error" id="grant-reference-error">already used for a different change: a different change needs a reference of its own</p>');
    expect(other.body).toMatch(/id="grant-reference"[^>]*value="-INV;2026\/117"/);

    // What the CLI refuses, the form refuses, each problem under the field (the credits' too, at once).
    const bad = await send(client, orgId, await creditsForm(client, orgId, { credits: '+5', reference: 'a\tb' }));
    expect(bad.status).toBe(422);
    expect(bad.body).toContain('<p class="field-error" id="grant-reference-error">must not contain line breaks, tabs or other control characters</p>');
    expect(bad.body).toContain('id="grant-credits-error"');
    const long = await send(client, orgId, await creditsForm(client, orgId, { credits: '5', reference: 'x'.repeat(101) }));
    expect(long.status).toBe(422);
    expect(long.body).toContain('<p class="field-error" id="grant-reference-error">at most 100 characters</p>');

    // A double-click of a form with a new reference: booked once, the other answer as before.
    const form = await creditsForm(client, orgId, { credits: '7', reference: 'INV 2026-200' });
    const answers = await Promise.all([send(client, orgId, form), send(client, orgId, form)]);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect(answers.filter((a) => a.body.includes('That form had already been sent: its credits were booked once, not twice.'))).toHaveLength(1);
    // Blank: a change of its own each time, as without --reference.
    for (let i = 0; i < 2; i++) expect((await send(client, orgId, await creditsForm(client, orgId, { credits: '3', reference: '  ' }))).status).toBe(200);

    expect(await balanceOf(orgId)).toBe(opening + 1000 + 7 + 3 + 3);
    expect(await count('usage_ledger', { organization_id: orgId, entry_type: 'top_up' })).toBe(4);
    expect(await env.db('audit_log').where({ organization_id: orgId, action: 'credits.top_up' }).orderBy('id').pluck('details')).toEqual([
      { credits: 1000, reason: 'invoice paid', reference: REFERENCE },
      { credits: 7, reason: 'invoice paid', reference: 'INV 2026-200' },
      { credits: 3, reason: 'invoice paid' },
      { credits: 3, reason: 'invoice paid' },
    ]);
  });
});

describe('when a credit change was made under a reference', () => {
  it('then the report page, its CSV, the CLI\'s report (table and JSON) and the Activity page show it, in English and Italian', async () => {
    const { id: orgId } = await createOrganization(env.db, { name: 'Report reference test', planId: 'standard' });
    const client = await signedInOperator(env);
    expect((await send(client, orgId, await creditsForm(client, orgId, { credits: '1000', reference: REFERENCE }))).status).toBe(200);
    expect((await send(client, orgId, await creditsForm(client, orgId, { kind: 'grant', credits: '5', reason: 'goodwill' }))).status).toBe(200);
    const period = periodOf(new Date());

    const report = await (await client.get(`/orgs/${orgId}/report?period=${period}`)).text();
    const entries = report.slice(report.indexOf('id="report-entries"'), report.indexOf('id="report-products"'));
    expect(entries).toContain('<th scope="col">Reference</th>');
    expect(entries).toContain(`<td>${REFERENCE}</td>`);

    // The CSV's columns as before, `reference` added last; the reference neutralised as a reason is.
    const csv = (await (await client.get(`/orgs/${orgId}/report.csv?period=${period}&sep=comma`)).text()).trimEnd().split('\r\n');
    expect(csv[0]).toBe('section,name,at,quantity,unit,calls,detail,reference');
    const entryLines = csv.filter((l) => l.startsWith('entry,'));
    expect(entryLines).toHaveLength(3);
    expect(entryLines.find((l) => l.startsWith('entry,top_up,'))).toMatch(/^entry,top_up,[^,]+,1000,credits,,[^,]+: invoice paid,"'-INV;2026\/117"$/);
    expect(entryLines.find((l) => l.startsWith('entry,grant,') && l.includes('goodwill'))).toMatch(/: goodwill,$/);
    // Every line as wide as the header (summary and the others end with an empty reference).
    expect(csv.find((l) => l.startsWith('summary,opening_balance,'))).toMatch(/,credits,,,$/);
    const semicolons = (await (await client.get(`/orgs/${orgId}/report.csv?period=${period}&sep=semicolon`)).text()).split('\r\n');
    expect(semicolons[0]).toBe('section;name;at;quantity;unit;calls;detail;reference');
    expect(semicolons.find((l) => l.startsWith('entry;top_up;'))).toMatch(/;"'-INV;2026\/117"$/);

    const activity = await (await client.get(`/orgs/${orgId}/activity`)).text();
    expect(activity).toContain(`Topped up 1,000 credits, reference ${REFERENCE}: invoice paid`);
    expect(activity).toContain('Granted 5 credits: goodwill');
    client.jar.set('dash_lang', 'it');
    expect(await (await client.get(`/orgs/${orgId}/activity`)).text()).toContain(`Ricaricati 1.000 crediti, riferimento ${REFERENCE}: invoice paid`);
    expect(await (await client.get(`/orgs/${orgId}/report?period=${period}`)).text()).toContain('<th scope="col">Riferimento</th>');

    const [table, json] = await Promise.all([
      runCli(inject('databaseUrl'), 'report', '--org', orgId, '--period', period),
      runCli(inject('databaseUrl'), 'report', '--org', orgId, '--period', period, '--format', 'json'),
    ]);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.split('\n');
    const header = lines.findIndex((l) => /^\s+AT\s+TYPE\s+CREDITS\s+BY\s+REFERENCE\s+REASON\s*$/.test(l));
    expect(header).toBeGreaterThan(0);
    expect(lines.slice(header + 1).find((l) => l.includes('top_up'))).toMatch(new RegExp(`\\s1000\\s+\\S+\\s+${REFERENCE}\\s+invoice paid\\s*$`));
    expect(json.code, json.stderr).toBe(0);
    const entriesJson = (JSON.parse(json.stdout) as { entries: { type: string; reference: string | null }[] }).entries;
    expect(entriesJson.filter((e) => e.type !== 'period_rollover').map((e) => [e.type, e.reference])).toEqual(expect.arrayContaining([['top_up', REFERENCE], ['grant', null]]));
  });
});
