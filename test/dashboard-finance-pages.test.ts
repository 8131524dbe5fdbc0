import { describe, expect, inject, it } from 'vitest';
import { changeCredits, periodStart, recordRefusedCalls, setCallsCap } from '../core/billing/index.js';
import { addThreshold } from '../core/alerts/index.js';
import { reconcileLedger } from '../core/billing/reconcile-ledger.js';
import { createApiKey } from '../core/auth/index.js';
import { formats } from '../dashboard/i18n/translate.js';
import { adminOfNewOrg, applyUsage, createOperator, dashboardForFile, httpSession, usageEventFor } from './dashboard-fixtures.js';
import { runCli } from './support/run-cli.js';

// The finance pages over plain HTTP, with addresses people (or their bookmarks) get wrong.

const env = dashboardForFile();

describe('finance pages', () => {
  it('when the month in the address is malformed, out of range or not begun, then usage, report, CSV and ledger refuse it (422) as cli report does, instead of showing another month', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Finance bad period test');
    const thisMonth = new Date().toISOString().slice(0, 7);
    const nextYear = `${Number(thisMonth.slice(0, 4)) + 1}-01`;
    for (const period of ['2026-13', '2026-1', 'abc', '1969-12', '9999-12', nextYear]) {
      for (const path of ['usage', 'report', 'report.csv', 'ledger']) {
        const res = await client.get(`/orgs/${orgId}/${path}?period=${period}`);
        expect(res.status, `${path} ${period}`).toBe(422);
        const body = await res.text();
        expect(body, `${path} ${period}`).toContain('Please check the form: Period: a month, YYYY-MM, not after the current one');
        expect(body).not.toContain('summary,period');
      }
    }
    // A past month without a ledger row is shown, and the selector says so.
    for (const path of ['report', 'usage']) {
      expect(await (await client.get(`/orgs/${orgId}/${path}?period=2025-11`)).text(), path).toContain('<option value="2025-11" selected>');
    }
    // No period, or this month, is this month's report.
    for (const query of ['', `?period=${thisMonth}`]) {
      const csv = await (await client.get(`/orgs/${orgId}/report.csv${query}`)).text();
      expect(csv).toContain(`summary,period,,${thisMonth},,,`);
    }
  });

  it('when the page is in Italian, then a refused month is explained in Italian', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Finance bad period Italian test');
    await client.get('/language?lang=it&next=/');
    const body = await (await client.get(`/orgs/${orgId}/report?period=2026-13`)).text();
    expect(body).toContain('Controlla il modulo: Periodo: un mese, AAAA-MM, non successivo a quello in corso');
  });

  it('when credits were granted by a person then the ledger, the report and its CSV name them by e-mail, and other actors as recorded', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Finance actor test');
    const operator = await createOperator(env.db);
    const op = httpSession(env.dashboard.url);
    await op.signIn(operator.email, operator.password);
    const page = `/operator/organizations/${orgId}`;
    expect((await op.post(`${page}/credits`, { _csrf: await op.csrf(page), kind: 'grant', credits: '500', reason: 'contract bonus' })).status).toBe(200);
    await changeCredits(env.db, { organizationId: orgId, kind: 'top_up', credits: 100, actor: 'cli:maria', reason: 'invoice 7' });

    const ledger = await (await client.get(`/orgs/${orgId}/ledger`)).text();
    expect(ledger).toContain(`contract bonus <span class="muted small">· ${operator.email}</span>`);
    expect(ledger).toContain('invoice 7 <span class="muted small">· cli:maria</span>');
    expect(ledger).not.toMatch(/· usr_/);
    const report = await (await client.get(`/orgs/${orgId}/report`)).text();
    expect(report).toContain(operator.email);
    const csv = await (await client.get(`/orgs/${orgId}/report.csv`)).text();
    expect(csv).toMatch(new RegExp(`^entry,grant,[^,]+,500,credits,,${operator.email.replaceAll('.', '\\.')}: contract bonus,$`, 'm'));
    expect(csv).toMatch(/^entry,top_up,[^,]+,100,credits,,cli:maria: invoice 7,$/m);
  });

  it('when finance opens the report, then the balance table names its columns and each row by its label (row headers), in English and Italian', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Finance balance headers test');
    const balanceTable = async () => /id="report-balance"[\s\S]*?<\/table>/.exec(await (await client.get(`/orgs/${orgId}/report`)).text())?.[0] ?? '';
    let table = await balanceTable();
    expect(table).toMatch(/<thead><tr><th scope="col">Line<\/th><th scope="col" class="num">Amount<\/th><\/tr><\/thead>/);
    expect(table).toContain('<th scope="row">Opening balance</th>');
    expect(table).toContain('<th scope="row">Calls used (call-priced products only)</th>');
    // No empty heading, and no row label in a plain cell.
    expect(table).not.toMatch(/<th scope="col"[^>]*><\/th>/);
    expect(table).not.toContain('<td>Opening balance</td>');
    await client.get('/language?lang=it&next=/');
    table = await balanceTable();
    expect(table).toMatch(/<th scope="col">Voce<\/th><th scope="col" class="num">Importo<\/th>/);
    expect(table).toContain('<th scope="row">Saldo iniziale</th>');
  });

  it('when usage was made with a key then the ledger names the key as the keys page does, not by its id', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Finance ledger key test');
    const key = await createApiKey(env.db, { organizationId: orgId, name: 'Billing robot' });
    await applyUsage(env.db, [usageEventFor(orgId, { keyId: key.record.id })]);
    const ledger = await (await client.get(`/orgs/${orgId}/ledger`)).text();
    expect(ledger).toContain(`api · Billing robot (${key.record.prefix}…)`);
    expect(ledger).not.toContain(key.record.id);
  });

  it('when the page is in Italian, then the reasons the system wrote on the ledger and the flags are in Italian, and a person\'s reason as typed', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Finance Italian reasons test');
    const operator = await createOperator(env.db);
    const op = httpSession(env.dashboard.url);
    await op.signIn(operator.email, operator.password);
    const page = `/operator/organizations/${orgId}`;
    // The opening grant (by the system), a cap set in the operator pages, a cap the plan sets
    // for this month only (the calls flag goes up), and a month's rollover (it comes down).
    expect((await op.post(`${page}/period`, { ...(await op.hiddenFields(page, `${page}/period`)), creditsPerPeriod: '', callsCap: '50' })).status).toBe(200);
    await setCallsCap(env.db, { organizationId: orgId, callsCap: 0, thisPeriodOnly: true, actor: 'system', reason: 'plan standard' });
    const period = new Date().toISOString().slice(0, 7);
    await env.db('allowances').where({ organization_id: orgId }).update({ period: new Date(periodStart(period).getTime() - 1).toISOString().slice(0, 7) });
    await changeCredits(env.db, { organizationId: orgId, kind: 'top_up', credits: 100, actor: 'cli:maria', reason: 'invoice 7' });
    // A call charged, then refused (503) before its event was confirmed: refunded by the system.
    const refusedCall = usageEventFor(orgId);
    await applyUsage(env.db, [refusedCall]);
    expect(await recordRefusedCalls(env.db, [refusedCall])).toEqual([refusedCall.eventId]);

    // Calls refused (503) before their events were confirmed, never charged: `refused` rows.
    const neverCharged = [usageEventFor(orgId, { product: 'company-financials', quantity: 5, unit: 'credits' }), usageEventFor(orgId, { product: 'company-report', quantity: 1, unit: 'calls' })];
    expect(await recordRefusedCalls(env.db, neverCharged)).toEqual([]);

    client.jar.set('dash_lang', 'it');
    const month = formats('it').period(period);
    const ledger = await (await client.get(`/orgs/${orgId}/ledger`)).text();
    expect(ledger).toContain(`piano standard: crediti inclusi di ${month} <span class="muted small">· sistema</span>`);
    expect(ledger).toContain(`tetto chiamate da 100.000 a 50: impostato dalla dashboard dell&#39;operatore <span class="muted small">· ${operator.email}</span>`);
    expect(ledger).toContain('tetto chiamate da 50 a 0 (solo questo periodo): piano standard');
    expect(ledger).toContain('cambio di mese: assegnati 100.000 crediti, il conteggio delle chiamate riparte');
    expect(ledger).toContain('invoice 7 <span class="muted small">· cli:maria</span>');
    expect(ledger).toContain('rimborso: chiamata rifiutata (503) dopo l&#39;addebito <span class="muted small">· sistema</span>');
    expect(ledger).toContain('chiamata rifiutata (503) prima che il suo evento di consumo fosse confermato: 5 crediti per company-financials, non addebitata');
    expect(ledger).toContain('chiamata rifiutata (503) prima che il suo evento di consumo fosse confermato: 1 chiamata per company-report, non addebitata');
    const report = await (await client.get(`/orgs/${orgId}/report`)).text();
    expect(report).toContain(`piano standard: crediti inclusi di ${month}`);
    // Who made a change is "Eseguito da" (not "Da", which reads "From"), and the usage tables'
    // call count says it counts every call.
    expect(report).toContain('<th scope="col">Eseguito da</th>');
    expect(report).not.toContain('<th scope="col">Da</th>');
    expect(report.match(/<th scope="col" class="num">Tutte le chiamate<\/th>/g)).toHaveLength(3);
    expect(report).not.toContain('>chiamate</th>');
    expect(report).toMatch(/<td>Tetto chiamate raggiunto<\/td><td>attivato<\/td><td>piano standard \(sistema\)<\/td>/);
    expect(report).toMatch(new RegExp(`<td>Tetto chiamate raggiunto</td><td>rimosso</td><td>cambio di periodo a ${month}</td>`));
    // Said in Italian on the page; written as ever in the ledger, which the CLI and CSV read.
    expect(await env.db('usage_ledger').where({ organization_id: orgId, entry_type: 'grant' }).pluck('reason')).toEqual([`plan standard: included credits for ${period}`]);
    for (const body of [ledger, report]) {
      expect(body).not.toMatch(/included credits|calls cap|month rollover|period rollover|operator dashboard|limit_reached|call refused|[>(]system[<)]/);
    }
  });

  it('when a call-priced call was charged and then refunded (refused, 503) then every form of the report counts the calls the cap limits, as the overview does, and the ledger still reconciles', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Finance refunded call test');
    const call = () => usageEventFor(orgId, { product: 'company-report', quantity: 1, unit: 'calls' });
    const refused = call();
    await applyUsage(env.db, [call(), refused, call()]);
    expect(await recordRefusedCalls(env.db, [refused])).toEqual([refused.eventId]);
    const { calls_used: callsUsed } = await env.db('allowances').where({ organization_id: orgId }).first<{ calls_used: number }>('calls_used');
    expect(callsUsed).toBe(2);
    const period = new Date().toISOString().slice(0, 7);

    // The dashboard: the overview (from the allowance) and the report page say the same.
    const overview = await (await client.get(`/orgs/${orgId}`)).text();
    expect(overview).toContain('2 of 100,000');
    const page = await (await client.get(`/orgs/${orgId}/report?period=${period}`)).text();
    expect(page).toMatch(/Calls used \(call-priced products only\)<\/th><td[^>]*>2<\/td>/);
    expect(await (await client.get(`/orgs/${orgId}/report.csv?period=${period}`)).text()).toContain('summary,calls_used,,2,calls,,');
    // The CLI's table, JSON and CSV.
    const cli = (format: string) => runCli(inject('databaseUrl'), 'report', '--org', orgId, '--period', period, '--format', format);
    const [table, json, csv] = await Promise.all([cli('table'), cli('json'), cli('csv')]);
    expect(table.stdout).toContain('calls used (calls-priced products only; the CALLS columns below count every call): 2\n');
    expect(JSON.parse(json.stdout)).toMatchObject({ callsUsed: 2, byProduct: [{ product: 'company-report', quantity: 3, unit: 'calls', calls: 3 }] });
    expect(csv.stdout).toContain('summary,calls_used,,2,calls,,');
    expect((await reconcileLedger(env.db, { organizationIds: [orgId] })).differences).toEqual([]);
  });

  it('when thresholds fired on the 8th, the 11th and the 18th, then the Italian alerts page says "Scattata l\'8", "l\'11" and "il 18"', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Finance Italian articles test');
    const { period } = await env.db('allowances').where({ organization_id: orgId }).first('period');
    for (const [value, day] of [[10, 8], [20, 11], [30, 18]] as const) {
      const threshold = await addThreshold(env.db, orgId, { kind: 'percent_used', value });
      await env.db('alert_thresholds').where({ id: threshold.id }).update({ fired_period: period, fired_at: new Date(Date.UTC(2029, 10, day, 9, 5)) });
    }
    client.jar.set('dash_lang', 'it');
    const alerts = await (await client.get(`/orgs/${orgId}/alerts`)).text();
    expect(alerts).toContain('Scattata l&#39;8 nov 2029, 09:05 UTC');
    expect(alerts).toContain('Scattata l&#39;11 nov 2029, 09:05 UTC');
    expect(alerts).toContain('Scattata il 18 nov 2029, 09:05 UTC');
    expect(alerts).not.toMatch(/il (8|11) nov/);
  });
});
