import { describe, expect, it } from 'vitest';
import { changeCredits, setCallsCap } from '../core/billing/index.js';
import { saidWithVowel } from '../dashboard/i18n/italian-articles.js';
import { formats } from '../dashboard/i18n/translate.js';
import { adminOfNewOrg, applyUsage, dashboardForFile, usageEventFor } from './dashboard-fixtures.js';

// What the finance pages say, as a finance reviewer reads them in English and Italian: which
// calls each count counts, what the burn rate is computed over, that months are UTC, that a
// reached cap is reached, and what a month not available is called.

const env = dashboardForFile();
const thisMonth = () => new Date().toISOString().slice(0, 7);

describe('finance wording', () => {
  it('when all of the last 7 days\' use was a few minutes ago then the overview says the rate is averaged since that first call, one day at least, not over 7 days', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Burn since first call test');
    const idle = await (await client.get(`/orgs/${orgId}`)).text();
    expect(idle).toContain('<div class="stat-sub">No calls in the last 7 days</div>');
    client.jar.set('dash_lang', 'it');
    expect(await (await client.get(`/orgs/${orgId}`)).text()).toContain('<div class="stat-sub">Nessuna chiamata negli ultimi 7 giorni</div>');

    const first = new Date(Date.now() - 120_000);
    await applyUsage(env.db, [
      usageEventFor(orgId, { occurredAt: first.toISOString(), quantity: 380 }),
      usageEventFor(orgId, { occurredAt: new Date(first.getTime() + 60_000).toISOString(), quantity: 5 }),
    ]);
    client.jar.set('dash_lang', 'en');
    const english = await (await client.get(`/orgs/${orgId}`)).text();
    expect(english).toContain(`<div class="stat-sub">385 credits and 0 calls (call-priced) a day, averaged since ${formats('en').dateTime(first)} (the first call of the last 7 days; over one day at least)</div>`);
    expect(english).not.toContain('a day (last 7 days)');
    client.jar.set('dash_lang', 'it');
    const italian = await (await client.get(`/orgs/${orgId}`)).text();
    // "dall'8 nov", "dal 9 nov": on the 1st, 8th and 11th the article is elided.
    const since = formats('it').dateTime(first);
    expect(italian).toContain(`<div class="stat-sub">385 crediti e 0 chiamate (prodotti conteggiati in chiamate) al giorno, in media ${saidWithVowel(since) ? 'dall&#39;' : 'dal '}${since} (la prima chiamata degli ultimi 7 giorni; su almeno un giorno)</div>`);
  });

  it('when credits are topped up after the newest call then the report\'s stamp says calls are counted up to that call, not that the page is as of it, in both languages', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Stamp after top-up test');
    const call = new Date(Date.now() - 180_000);
    await applyUsage(env.db, [usageEventFor(orgId, { occurredAt: call.toISOString(), quantity: 3 })]);
    await changeCredits(env.db, { organizationId: orgId, kind: 'top_up', credits: 1_000, actor: 'test', reason: 'paid after the call' });
    const english = await (await client.get(`/orgs/${orgId}/report`)).text();
    expect(english).toContain(`Calls counted up to ${formats('en').dateTime(call)}</p>`);
    expect(english).not.toContain('As of ');
    client.jar.set('dash_lang', 'it');
    const italian = await (await client.get(`/orgs/${orgId}/report`)).text();
    const at = formats('it').dateTime(call);
    expect(italian).toContain(`Chiamate conteggiate fino ${saidWithVowel(at) ? 'all&#39;' : 'al '}${at}</p>`);
  });

  it('when the calls cap is reached then the calls card says it is reached, not a date, and the banner says which calls are refused and which still served, in both languages', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Cap already reached test');
    await setCallsCap(env.db, { organizationId: orgId, callsCap: 2, thisPeriodOnly: true, actor: 'test', reason: 'small cap' });
    await applyUsage(env.db, [usageEventFor(orgId, { product: 'company-report', quantity: 1, unit: 'calls' }), usageEventFor(orgId, { product: 'company-report', quantity: 1, unit: 'calls' })]);
    const callsCard = (body: string) => /<div class="stat"><div class="stat-label">(Calls used|Chiamate usate)[^<]*<\/div>[\s\S]*?<\/div><\/div>/.exec(body)![0];

    const english = await (await client.get(`/orgs/${orgId}`)).text();
    expect(callsCard(english)).toMatch(/^<div class="stat"><div class="stat-label">Calls used \(call-priced products only\)<\/div><div class="stat-value">2 of 2<\/div><div class="stat-sub"><meter [^>]*>2\/2<\/meter><br>Call cap: already reached<\/div><\/div>$/);
    expect(english).not.toContain('call cap is reached around');
    expect(english).toContain('The call cap of this period is reached: calls to call-priced products are refused until the next period; credit-priced ones are still served while credits last.');

    client.jar.set('dash_lang', 'it');
    const italian = await (await client.get(`/orgs/${orgId}`)).text();
    expect(callsCard(italian)).toMatch(/^<div class="stat"><div class="stat-label">Chiamate usate \(solo prodotti conteggiati in chiamate\)<\/div><div class="stat-value">2 su 2<\/div><div class="stat-sub"><meter [^>]*>2\/2<\/meter><br>Tetto chiamate: già raggiunto<\/div><\/div>$/);
    expect(italian).toContain('Tetto chiamate del periodo raggiunto: le chiamate ai prodotti conteggiati in chiamate sono rifiutate fino al prossimo periodo; quelle ai prodotti pagati in crediti restano servite finché ci sono crediti.');
    expect(italian).not.toContain('a consumo');
    expect(await (await client.get(`/orgs/${orgId}/report`)).text()).not.toContain('a consumo');
  });

  it('when calls are counted then the usage page says all calls and the overview and report say call-priced products only, in both languages', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Two call counts test');
    await applyUsage(env.db, [usageEventFor(orgId), usageEventFor(orgId, { product: 'company-report', quantity: 1, unit: 'calls' })]);
    const usage = await (await client.get(`/orgs/${orgId}/usage?view=day&measure=calls`)).text();
    expect(usage).toContain(`aria-current="page">All calls</a>`);
    expect(usage).toContain(`All calls by day (UTC), ${formats('en').period(thisMonth())}`);
    expect(usage).toContain('<th scope="col">Day (UTC)</th><th scope="col" class="num">All calls</th>');
    const report = await (await client.get(`/orgs/${orgId}/report`)).text();
    expect(report).toContain('<th scope="row">Calls used (call-priced products only)</th><td class="num">1</td>');
    expect(await (await client.get(`/orgs/${orgId}`)).text()).toContain('<div class="stat-label">Calls used (call-priced products only)</div><div class="stat-value">1 of');
    // The ledger's calls column moves only with call-priced usage, and says so.
    expect(await (await client.get(`/orgs/${orgId}/ledger`)).text()).toContain('>Calls (call-priced)</th>');

    client.jar.set('dash_lang', 'it');
    const usageIt = await (await client.get(`/orgs/${orgId}/usage?view=day&measure=calls`)).text();
    expect(usageIt).toContain(`aria-current="page">Tutte le chiamate</a>`);
    expect(usageIt).toContain(`Tutte le chiamate per giorno (UTC), ${formats('it').period(thisMonth())}`);
    // The chart's first day as Italian writes it ("1 nov", not "11-01", read as 11 January), and
    // the days of its table and of the report's as every other date of the pages.
    const today = new Date().toISOString().slice(0, 10);
    const italianDate = new Intl.DateTimeFormat('it-IT', { dateStyle: 'medium', timeZone: 'UTC' }).format(new Date(`${today}T00:00:00Z`));
    expect(usageIt).toContain(`text-anchor="middle">${new Intl.DateTimeFormat('it-IT', { day: 'numeric', month: 'short', timeZone: 'UTC' }).format(new Date(`${thisMonth()}-01T00:00:00Z`))}</text>`);
    expect(usageIt).not.toMatch(/text-anchor="middle">\d\d-\d\d</);
    expect(usageIt).toContain(`<td>${italianDate}</td>`);
    const reportIt = await (await client.get(`/orgs/${orgId}/report`)).text();
    expect(reportIt).toContain('<th scope="row">Chiamate usate (solo prodotti conteggiati in chiamate)</th><td class="num">1</td>');
    expect(reportIt.split('id="report-days"')[1]).toContain(`<td>${italianDate}</td>`);
    expect(await (await client.get(`/orgs/${orgId}/ledger`)).text()).toContain('>Chiamate (prodotti conteggiati in chiamate)</th>');
  });

  it('when months and days are shown to finance then the pages say they are UTC, and in Italian what that means for a call just after midnight in Rome', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'UTC months test');
    const english = 'Months and days are in UTC: a call at 00:30 on the 1st, Rome time, counts on the last day of the month before.';
    const italian = "Mesi e giorni sono in UTC: una chiamata alle 00:30 ora di Roma del giorno 1 conta nell&#39;ultimo giorno del mese precedente.";
    for (const path of ['usage', 'report', 'ledger']) {
      const body = await (await client.get(`/orgs/${orgId}/${path}`)).text();
      expect(body, path).toContain(english);
    }
    expect(await (await client.get(`/orgs/${orgId}/usage`)).text()).toContain('aria-current="page">By day (UTC)</a>');
    client.jar.set('dash_lang', 'it');
    for (const path of ['usage', 'report', 'ledger']) {
      const body = await (await client.get(`/orgs/${orgId}/${path}`)).text();
      expect(body, path).toContain(italian);
    }
    expect(await (await client.get(`/orgs/${orgId}/usage`)).text()).toContain('aria-current="page">Per giorno (UTC)</a>');
  });

  it('when the address asks for a month not begun (or not a month) then the page is headed "Month not available", not "Something went wrong"', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Month not available test');
    const nextYear = `${Number(thisMonth().slice(0, 4)) + 1}-01`;
    for (const path of ['usage', 'report', 'report.csv', 'ledger', 'ledger.csv']) {
      const res = await client.get(`/orgs/${orgId}/${path}?period=${nextYear}`);
      expect(res.status, path).toBe(422);
      const body = await res.text();
      expect(body, path).toContain('<h1>Month not available</h1>');
      expect(body, path).toContain('Please check the form: Period: a month, YYYY-MM, not after the current one');
      expect(body, path).not.toContain('Something went wrong');
    }
    client.jar.set('dash_lang', 'it');
    const italian = await (await client.get(`/orgs/${orgId}/report?period=2026-13`)).text();
    expect(italian).toContain('<h1>Mese non disponibile</h1>');
    // Other refusals keep their headings: a page that does not exist is still "Page not found".
    client.jar.set('dash_lang', 'en');
    expect(await (await client.get(`/orgs/${orgId}/nowhere`)).text()).toContain('<h1>Page not found</h1>');
  });
});
