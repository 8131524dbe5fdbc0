import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { changeCredits } from '../core/billing/index.js';
import { runCli } from './support/run-cli.js';
import { adminOfNewOrg, applyUsage, createMember, dashboardForFile, httpSession, signedInOperator, usageEventFor } from './dashboard-fixtures.js';

// The ledger page's "Download CSV": finance staff cannot run `ledger export`, so the dashboard
// serves its file, for the page's month and type, over the real dashboard and Postgres: a UTF-8
// BOM, then the CLI's bytes (here in English: commas; Italian pages' semicolons are
// dashboard-csv-excel.test.ts's).

const env = dashboardForFile();
const cli = (...args: string[]) => runCli(inject('databaseUrl'), ...args);
const thisMonth = () => new Date().toISOString().slice(0, 7);
const PAST = ['2026-01', '2026-02'] as const;
// More rows than the download sends at a time (500 lines): three chunks.
const BUSY_ROWS = 1_200;

/**
 * An organization with ledger rows in two past months and this one: a month of usage, top-ups
 * whose reasons need quoting or would run as spreadsheet formulas, an adjustment, and this
 * month's opening grant and usage through the billing pipeline.
 */
async function organizationWithLedger(name: string) {
  const { orgId, client } = await adminOfNewOrg(env, name);
  const row = (period: string, at: Date, fields: Record<string, unknown>) => ({
    event_id: `test_${randomUUID()}`, organization_id: orgId, source: 'admin', credits_delta: 0, period, occurred_at: at, ...fields,
  });
  await env.db('usage_ledger').insert([
    ...Array.from({ length: BUSY_ROWS }, (_, i) => row(PAST[0], new Date(Date.UTC(2026, 0, 5, 9, 0, Math.floor(i / 3))), {
      entry_type: 'usage', source: i % 2 ? 'mcp' : 'api', key_id: 'key_test', product: 'company-financials', quantity: 5, unit: 'credits', credits_delta: -5,
    })),
    row(PAST[0], new Date(Date.UTC(2026, 0, 20)), { entry_type: 'top_up', credits_delta: 1000, actor: 'cli:maria', reason: 'invoice "7", paid' }),
    row(PAST[1], new Date(Date.UTC(2026, 1, 3)), { entry_type: 'top_up', credits_delta: 50, actor: 'cli:maria', reason: '=HYPERLINK("http://evil.example")' }),
    row(PAST[1], new Date(Date.UTC(2026, 1, 4)), { entry_type: 'adjustment', credits_delta: -20, actor: 'cli:maria', reason: '-20 goodwill reversed' }),
  ]);
  await changeCredits(env.db, { organizationId: orgId, kind: 'top_up', credits: 100, actor: 'cli:luca', reason: 'invoice 9' });
  await applyUsage(env.db, [usageEventFor(orgId), usageEventFor(orgId, { source: 'mcp' })]);
  return { orgId, client };
}

async function cliExport(orgId: string, period: string): Promise<string> {
  const run = await cli('ledger', 'export', '--org', orgId, '--period', period, '--format', 'csv');
  expect(run.code, run.stderr).toBe(0);
  return run.stdout;
}

const BOM = '\uFEFF';
/** The body's bytes as UTF-8 text, the BOM kept (Response.text() drops it). */
const bytes = async (res: Response) => new TextDecoder('utf-8', { ignoreBOM: true }).decode(await res.arrayBuffer());
/** A download is the BOM, then the CLI's bytes (docs/dashboard.md); the lines of those bytes. */
const download = async (res: Response) => {
  const body = await bytes(res);
  expect(body.startsWith(BOM)).toBe(true);
  return body.slice(1);
};
const lines = (csv: string) => csv.split('\r\n').slice(0, -1);
// The CSV's third column is the entry type; none of these rows quotes the first three.
const ofType = (csv: string, type: string) => {
  const [header, ...rows] = lines(csv);
  return [header, ...rows.filter((l) => l.split(',')[2] === type)].map((l) => `${l}\r\n`).join('');
};

describe('ledger download', () => {
  it('when finance downloads a month of the ledger then it is a BOM and the file `ledger export --format csv` writes for it, every row, quoting and formula guard included', async () => {
    const { orgId } = await organizationWithLedger('Ledger CSV month test');
    const finance = await createMember(env.db, orgId, 'finance');
    const client = httpSession(env.dashboard.url);
    await client.signIn(finance.email, finance.password);

    for (const period of [...PAST, thisMonth()]) {
      const res = await client.get(`/orgs/${orgId}/ledger.csv?period=${period}`);
      expect(res.status, period).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="ledger-${orgId}-${period}.csv"`);
      expect(await bytes(res), period).toBe(BOM + await cliExport(orgId, period));
    }
    const january = await download(await client.get(`/orgs/${orgId}/ledger.csv?period=${PAST[0]}`));
    expect(lines(january)).toHaveLength(1 + BUSY_ROWS + 1);
    expect(january).toContain(',cli:maria,"invoice ""7"", paid",\r\n');
    const february = await download(await client.get(`/orgs/${orgId}/ledger.csv?period=${PAST[1]}`));
    expect(february).toContain(`,cli:maria,"'=HYPERLINK(""http://evil.example"")",\r\n`);
    expect(february).toContain(',-20,0,');
    expect(february).toContain(",cli:maria,'-20 goodwill reversed,\r\n");
  });

  it('when the page is filtered by type, or shows every month, then the download is that selection: the CLI\'s rows of that type, and the months\' exports one after the other', async () => {
    const { orgId, client } = await organizationWithLedger('Ledger CSV filters test');
    const exports = await Promise.all([...PAST, thisMonth()].map((p) => cliExport(orgId, p)));
    const [header] = lines(exports[0]!);

    const topUps = await client.get(`/orgs/${orgId}/ledger.csv?period=${PAST[0]}&type=top_up`);
    expect(topUps.headers.get('content-disposition')).toBe(`attachment; filename="ledger-${orgId}-${PAST[0]}-top_up.csv"`);
    const topUpsCsv = await download(topUps);
    expect(topUpsCsv).toBe(ofType(exports[0]!, 'top_up'));
    expect(lines(topUpsCsv)).toHaveLength(2);

    const all = await client.get(`/orgs/${orgId}/ledger.csv`);
    expect(all.headers.get('content-disposition')).toBe(`attachment; filename="ledger-${orgId}-all.csv"`);
    const expectedAll = `${header}\r\n${exports.map((e) => e.slice(e.indexOf('\r\n') + 2)).join('')}`;
    expect(await download(all)).toBe(expectedAll);
    // Every month's top-ups: the page's type filter alone. An empty selection is the header.
    expect(await download(await client.get(`/orgs/${orgId}/ledger.csv?type=top_up`))).toBe(ofType(expectedAll, 'top_up'));
    expect(await download(await client.get(`/orgs/${orgId}/ledger.csv?period=${PAST[1]}&type=grant`))).toBe(`${header}\r\n`);
    // A type the page does not offer is all types there, and here.
    expect(await download(await client.get(`/orgs/${orgId}/ledger.csv?period=${PAST[1]}&type=nonsense`))).toBe(exports[1]);
    // The page's filters and page number: the download is the filters' rows, not the page's.
    expect(await download(await client.get(`/orgs/${orgId}/ledger.csv?period=${PAST[0]}&page=3`))).toBe(exports[0]);
  });

  it('when downloads are cut short or only asked about (HEAD) then each export ends its transaction, and the dashboard\'s connections stay free', async () => {
    const { orgId, client } = await organizationWithLedger('Ledger CSV abandoned test');
    const url = `${env.dashboard.url}/orgs/${orgId}/ledger.csv?period=${PAST[0]}`;
    const cookie = [...client.jar].map(([k, v]) => `${k}=${v}`).join('; ');
    // More than the dashboard's pool (4): a connection kept by each would leave none, and the
    // next page would wait for one until knex gives up.
    const abandon = async () => {
      for (let i = 0; i < 6; i++) {
        expect((await fetch(url, { method: 'HEAD', headers: { cookie } })).status).toBe(200);
        const abort = new AbortController();
        const res = await fetch(url, { headers: { cookie }, signal: abort.signal });
        await res.body!.getReader().read();
        abort.abort();
      }
      return (await client.get(`/orgs/${orgId}/ledger.csv?period=${PAST[1]}`)).status;
    };
    const stuck = new Promise<string>((resolve) => setTimeout(() => resolve('no answer within 10 s'), 10_000).unref());
    expect(await Promise.race([abandon(), stuck])).toBe(200);
  });

  it('when the ledger page is shown then its Download CSV link carries the page\'s month and type, in English and Italian', async () => {
    const { orgId, client } = await organizationWithLedger('Ledger CSV link test');
    const filtered = await (await client.get(`/orgs/${orgId}/ledger?period=${PAST[1]}&type=top_up&page=1`)).text();
    expect(filtered).toContain(`<a class="btn btn-primary" href="/orgs/${orgId}/ledger.csv?period=${PAST[1]}&amp;type=top_up" download>Download CSV</a>`);
    expect(filtered).toContain('every row of the chosen period and type, not only this page');
    const unfiltered = await (await client.get(`/orgs/${orgId}/ledger`)).text();
    expect(unfiltered).toContain(`href="/orgs/${orgId}/ledger.csv" download>Download CSV</a>`);
    client.jar.set('dash_lang', 'it');
    const italian = await (await client.get(`/orgs/${orgId}/ledger?type=usage`)).text();
    expect(italian).toContain(`href="/orgs/${orgId}/ledger.csv?type=usage" download>Scarica CSV</a>`);
    expect(italian).toContain('tutte le righe del periodo e del tipo scelti, non solo questa pagina');
  });

  it('when someone is not a member, not signed in, or names a malformed month, then they get 404, the sign-in page or 422, and no ledger row', async () => {
    const { orgId, client } = await organizationWithLedger('Ledger CSV access test');
    const path = `/orgs/${orgId}/ledger.csv?period=${PAST[0]}`;

    const other = await adminOfNewOrg(env, 'Ledger CSV other org test');
    const refused = await other.client.get(path);
    expect(refused.status).toBe(404);
    expect(await refused.text()).not.toContain('company-financials');

    const anonymous = await httpSession(env.dashboard.url).get(path);
    expect(anonymous.status).toBe(302);
    expect(anonymous.headers.get('location')).toBe(`/sign-in?next=${encodeURIComponent(path)}`);

    const nextYear = `${Number(thisMonth().slice(0, 4)) + 1}-01`;
    for (const period of ['2026-13', '2026-1', 'abc', '1969-12', nextYear]) {
      const res = await client.get(`/orgs/${orgId}/ledger.csv?period=${period}&type=usage`);
      expect(res.status, period).toBe(422);
      expect(res.headers.get('content-type'), period).toMatch(/^text\/html/);
      const body = await res.text();
      expect(body, period).toContain('Please check the form: Period: a month, YYYY-MM, not after the current one');
      expect(body).not.toContain('eventId,');
    }

    // Operators read every organization's ledger, and so its download.
    const operator = await signedInOperator(env);
    expect(await download(await operator.get(path))).toBe(await cliExport(orgId, PAST[0]));
  });
});
