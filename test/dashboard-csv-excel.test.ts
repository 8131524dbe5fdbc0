import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { createApiKey } from '../core/auth/index.js';
import { runCli } from './support/run-cli.js';
import { adminOfNewOrg, applyUsage, dashboardForFile, usageEventFor } from './dashboard-fixtures.js';

// The CSV files as a finance reviewer in Italy opens them: byte for byte, over the real
// dashboard, the real CLI and Postgres. The dashboard's downloads are for Excel (a UTF-8 BOM,
// the separator of Excel in the page's language); the CLI's are for scripts (commas, no BOM);
// both are RFC 4180 (CR LF, fields with a separator, quote or line break quoted).

const env = dashboardForFile();
const cli = (...args: string[]) => runCli(inject('databaseUrl'), ...args);
const PERIOD = '2026-01';
const BOM = '\uFEFF';
const CRLF = '\r\n';

/** The body's bytes as UTF-8 text, the BOM kept (Response.text() drops it). */
const bytes = async (res: Response) => new TextDecoder('utf-8', { ignoreBOM: true }).decode(await res.arrayBuffer());

/**
 * An organization with an accented name and, in January 2026, a top-up whose reason holds a
 * semicolon and accents, and usage with two keys: one named like a formula with a semicolon in
 * it, one with an accent (every key label ends in "…", E2 80 A6).
 */
async function januaryOrganization(name: string) {
  const { orgId, client } = await adminOfNewOrg(env, name);
  const formula = await createApiKey(env.db, { organizationId: orgId, name: '=SUM(A1) test; script' });
  const accented = await createApiKey(env.db, { organizationId: orgId, name: 'Contabilità' });
  const [topUp] = await env.db('usage_ledger').insert({
    event_id: `test_${randomUUID()}`, organization_id: orgId, entry_type: 'top_up', source: 'admin', quantity: 100, unit: 'credits', credits_delta: 100, calls_delta: 0,
    period: PERIOD, occurred_at: new Date('2026-01-05T10:00:00Z'), applied_at: new Date('2026-01-05T10:00:01Z'), actor: 'cli:maria', reason: 'fattura n. 7; società «Caffè», saldo',
  }).returning<{ id: number; event_id: string }[]>(['id', 'event_id']);
  await applyUsage(env.db, [
    usageEventFor(orgId, { keyId: formula.record.id, occurredAt: '2026-01-10T09:00:00.000Z', quantity: 5 }),
    usageEventFor(orgId, { keyId: formula.record.id, occurredAt: '2026-01-10T09:30:00.000Z', quantity: 5 }),
    usageEventFor(orgId, { keyId: accented.record.id, occurredAt: '2026-01-11T23:30:00.000Z', product: 'company-report', quantity: 1, unit: 'calls' }),
  ]);
  // The report lists keys in the database's order of their ids.
  const keyOrder = await env.db('api_keys').whereIn('id', [formula.record.id, accented.record.id]).orderBy('id').pluck('id');
  return { orgId, client, formula: formula.record, accented: accented.record, topUp: topUp!, formulaFirst: keyOrder[0] === formula.record.id };
}

type January = Awaited<ReturnType<typeof januaryOrganization>>;

/** January's report as `cli report --format csv` writes it (made at `generatedAt`), with `sep` between fields. */
function expectedReport(o: January, generatedAt: string, sep: ',' | ';'): string {
  const formulaKey = ['by_key', o.formula.id, '', '10', 'credits', '2', `"'=SUM(A1) test; script (${o.formula.prefix}…)"`];
  const accentedKey = ['by_key', o.accented.id, '', '1', 'calls', '1', `Contabilità (${o.accented.prefix}…)`];
  const lines = [
    ['section', 'name', 'at', 'quantity', 'unit', 'calls', 'detail', 'reference'],
    ['summary', 'organization', '', o.orgId, '', '', ''],
    ['summary', 'period', '', PERIOD, '', '', ''],
    ['summary', 'as_of', '', '2026-01-11T23:30:00.000Z', '', '', ''],
    ['summary', 'generated_at', '', generatedAt, '', '', ''],
    ['summary', 'opening_balance', '', '0', 'credits', '', ''],
    ['summary', 'granted', '', '0', 'credits', '', ''],
    ['summary', 'topped_up', '', '100', 'credits', '', ''],
    ['summary', 'adjusted', '', '0', 'credits', '', ''],
    ['summary', 'rollover', '', '0', 'credits', '', ''],
    ['summary', 'used', '', '-10', 'credits', '', ''],
    ['summary', 'closing_balance', '', '90', 'credits', '', ''],
    ['summary', 'calls_used', '', '1', 'calls', '', ''],
    ['entry', 'top_up', '2026-01-05T10:00:00.000Z', '100', 'credits', '', '"cli:maria: fattura n. 7; società «Caffè», saldo"'],
    ['by_product', 'api:company-financials', '', '10', 'credits', '2', ''],
    ['by_product', 'api:company-report', '', '1', 'calls', '1', ''],
    ...(o.formulaFirst ? [formulaKey, accentedKey] : [accentedKey, formulaKey]),
    ['by_day', '2026-01-10', '', '10', 'credits', '2', ''],
    ['by_day', '2026-01-11', '', '1', 'calls', '1', ''],
  ];
  // No row here has a reference: each ends with an empty `reference`, the column added last.
  return lines.map((l) => (l.length === 8 ? l : [...l, '']).join(sep) + CRLF).join('');
}

/** January's ledger as `ledger export --format csv` writes it, with `sep` between fields. */
async function expectedLedger(o: January, sep: ',' | ';'): Promise<string> {
  const usage = await env.db('usage_ledger').where({ organization_id: o.orgId, period: PERIOD, entry_type: 'usage' }).orderBy('id')
    .select<{ id: number; event_id: string; key_id: string; applied_at: Date; credits_balance_after: number }[]>('id', 'event_id', 'key_id', 'applied_at', 'credits_balance_after');
  const header = ['id', 'eventId', 'entryType', 'source', 'keyId', 'product', 'quantity', 'unit', 'creditsDelta', 'callsDelta', 'creditsBalanceAfter', 'period', 'occurredAt', 'appliedAt', 'actor', 'reason', 'reference'];
  const usageLine = (i: number, product: string, quantity: number, unit: string, creditsDelta: number, at: string) => [
    usage[i]!.id, usage[i]!.event_id, 'usage', 'api', usage[i]!.key_id, product, quantity, unit, creditsDelta, 0, usage[i]!.credits_balance_after, PERIOD, at, usage[i]!.applied_at.toISOString(), '', '', '',
  ];
  const lines = [
    header,
    [o.topUp.id, o.topUp.event_id, 'top_up', 'admin', '', '', 100, 'credits', 100, 0, '', PERIOD, '2026-01-05T10:00:00.000Z', '2026-01-05T10:00:01.000Z', 'cli:maria', '"fattura n. 7; società «Caffè», saldo"', ''],
    usageLine(0, 'company-financials', 5, 'credits', -5, '2026-01-10T09:00:00.000Z'),
    usageLine(1, 'company-financials', 5, 'credits', -5, '2026-01-10T09:30:00.000Z'),
    usageLine(2, 'company-report', 1, 'calls', 0, '2026-01-11T23:30:00.000Z'),
  ];
  return lines.map((l) => l.join(sep) + CRLF).join('');
}

const generatedAt = (csv: string) => /summary[,;]generated_at[,;][,;]([^,;]+)[,;]/.exec(csv)![1]!;

describe('CSV for Excel and for scripts', () => {
  it('when finance downloads the report in English then it is a UTF-8 BOM and then the report with commas, CR LF line ends and every field holding a separator quoted', async () => {
    const o = await januaryOrganization('Caffè Società Cooperativa (report, English)');
    const res = await o.client.get(`/orgs/${o.orgId}/report.csv?period=${PERIOD}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const csv = await bytes(res);
    expect(csv).toBe(BOM + expectedReport(o, generatedAt(csv), ','));
  });

  it('when the page is in Italian then the report CSV separates fields with semicolons, as Excel in Italian reads them, and ?sep=comma gives the comma file', async () => {
    const o = await januaryOrganization('Caffè Società Cooperativa (report, Italian)');
    o.client.jar.set('dash_lang', 'it');
    const csv = await bytes(await o.client.get(`/orgs/${o.orgId}/report.csv?period=${PERIOD}`));
    expect(csv).toBe(BOM + expectedReport(o, generatedAt(csv), ';'));
    const comma = await bytes(await o.client.get(`/orgs/${o.orgId}/report.csv?period=${PERIOD}&sep=comma`));
    expect(comma).toBe(BOM + expectedReport(o, generatedAt(comma), ','));
    // And the other way round, from an English page.
    o.client.jar.set('dash_lang', 'en');
    const semicolon = await bytes(await o.client.get(`/orgs/${o.orgId}/report.csv?period=${PERIOD}&sep=semicolon`));
    expect(semicolon).toBe(BOM + expectedReport(o, generatedAt(semicolon), ';'));
  });

  it('when the CLI writes the report as CSV then it is the download\'s rows without the BOM: commas and CR LF, semicolons with --delimiter ";", and --delimiter with another format is refused', async () => {
    const o = await januaryOrganization('Caffè Società Cooperativa (report, CLI)');
    const report = (...args: string[]) => cli('report', '--org', o.orgId, '--period', PERIOD, ...args);
    const [commas, semicolons, table, json, ledgerJson, tab] = await Promise.all([
      report('--format', 'csv'),
      report('--format', 'csv', '--delimiter', ';'),
      report('--delimiter', ';'),
      report('--format', 'json', '--delimiter', ','),
      cli('ledger', 'export', '--org', o.orgId, '--period', PERIOD, '--format', 'json', '--delimiter', ','),
      report('--format', 'csv', '--delimiter', '\t'),
    ]);
    expect(commas.code, commas.stderr).toBe(0);
    expect(commas.stdout).toBe(expectedReport(o, generatedAt(commas.stdout), ','));
    expect(semicolons.code, semicolons.stderr).toBe(0);
    expect(semicolons.stdout).toBe(expectedReport(o, generatedAt(semicolons.stdout), ';'));
    // --delimiter says how to write CSV: with a table or JSON it is refused, not ignored.
    for (const [run, format] of [[table, 'table'], [json, 'json'], [ledgerJson, 'json']] as const) {
      expect(run.code, format).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(new RegExp(`^error: option '--delimiter' applies to --format csv only, not ${format}\n`));
    }
    expect(tab.code).toBe(1);
    expect(tab.stderr).toContain('Allowed choices are ,, ;');
  });

  it('when finance downloads the ledger then it is the BOM and `ledger export --format csv`\'s bytes, with the page language\'s separator or the one asked for', async () => {
    const o = await januaryOrganization('Caffè Società Cooperativa (ledger)');
    const english = await expectedLedger(o, ',');
    const italian = await expectedLedger(o, ';');

    const cliCommas = await cli('ledger', 'export', '--org', o.orgId, '--period', PERIOD);
    expect(cliCommas.code, cliCommas.stderr).toBe(0);
    expect(cliCommas.stdout).toBe(english);
    const cliSemicolons = await cli('ledger', 'export', '--org', o.orgId, '--period', PERIOD, '--delimiter', ';');
    expect(cliSemicolons.stdout).toBe(italian);

    expect(await bytes(await o.client.get(`/orgs/${o.orgId}/ledger.csv?period=${PERIOD}`))).toBe(BOM + english);
    expect(await bytes(await o.client.get(`/orgs/${o.orgId}/ledger.csv?period=${PERIOD}&sep=semicolon`))).toBe(BOM + italian);
    o.client.jar.set('dash_lang', 'it');
    expect(await bytes(await o.client.get(`/orgs/${o.orgId}/ledger.csv?period=${PERIOD}`))).toBe(BOM + italian);
    expect(await bytes(await o.client.get(`/orgs/${o.orgId}/ledger.csv?period=${PERIOD}&sep=comma`))).toBe(BOM + english);
    // A separator it does not know is the page language's, as a type it does not offer is all types.
    expect(await bytes(await o.client.get(`/orgs/${o.orgId}/ledger.csv?period=${PERIOD}&sep=tab`))).toBe(BOM + italian);
  });

  it('when the report and ledger pages are shown then each says which separator its CSV has and links to the file with the other one, in English and Italian', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Caffè CSV links test');
    const report = await (await client.get(`/orgs/${orgId}/report?period=${PERIOD}`)).text();
    expect(report).toContain(`CSV: UTF-8, fields separated by commas, as Excel in English reads them. <a href="/orgs/${orgId}/report.csv?period=${PERIOD}&amp;sep=semicolon" download>Download it with semicolons instead (Excel in Italian)</a>`);
    const ledger = await (await client.get(`/orgs/${orgId}/ledger`)).text();
    expect(ledger).toContain(`<a href="/orgs/${orgId}/ledger.csv?sep=semicolon" download>Download it with semicolons instead (Excel in Italian)</a>`);

    client.jar.set('dash_lang', 'it');
    const reportIt = await (await client.get(`/orgs/${orgId}/report?period=${PERIOD}`)).text();
    expect(reportIt).toContain(`CSV: UTF-8, campi separati da punto e virgola, come li legge Excel in italiano. <a href="/orgs/${orgId}/report.csv?period=${PERIOD}&amp;sep=comma" download>Scaricalo invece con le virgole (Excel in inglese)</a>`);
    const ledgerIt = await (await client.get(`/orgs/${orgId}/ledger?period=${PERIOD}&type=usage`)).text();
    expect(ledgerIt).toContain(`<a href="/orgs/${orgId}/ledger.csv?period=${PERIOD}&amp;type=usage&amp;sep=comma" download>Scaricalo invece con le virgole (Excel in inglese)</a>`);
  });
});
