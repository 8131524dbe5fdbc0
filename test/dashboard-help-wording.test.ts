import { readFileSync } from 'node:fs';
import { headingSlug } from '../api/docs/render-markdown.js';
import { describe, expect, it } from 'vitest';
import { createApiKey } from '../core/auth/index.js';
import { adminOfNewOrg, createMember, dashboardForFile } from './dashboard-fixtures.js';

// What the pages tell admins in passing, in English and Italian: where the webhook guide is,
// how long a rotated key kept working, and until when a member's password works once a reset
// link is made.

const apiBaseUrl = 'https://api.example.test';
const env = dashboardForFile({ apiBaseUrl });

describe('when an admin opens the alerts page', () => {
  it('then the signature help links the customers\' guide section on alert webhooks, served by the API, in the page\'s language', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Webhook guide link test');
    const linkOf = async () => /<p class="muted small" id="webhook-guide">([^<]*)<a href="([^"]+)" hreflang="(\w+)">([^<]*)<\/a><\/p>/.exec(await (await client.get(`/orgs/${orgId}/alerts`)).text());
    const english = (await linkOf())!;
    expect(english[2]).toBe(`${apiBaseUrl}/docs/getting-started?lang=en#alert-webhooks`);
    expect([english[1], english[3], english[4]]).toEqual(['What a webhook sends (body, headers, retries) and how to check its signature: ', 'en', 'Alert webhooks, in the getting-started guide']);
    client.jar.set('dash_lang', 'it');
    const italian = (await linkOf())!;
    expect(italian[2]).toBe(`${apiBaseUrl}/docs/getting-started?lang=it#webhook-degli-avvisi`);
    expect([italian[1], italian[3], italian[4]]).toEqual(['Che cosa invia un webhook (corpo, intestazioni, nuovi tentativi) e come verificarne la firma: ', 'it', 'Webhook degli avvisi, nella guida introduttiva']);
    expect(await (await client.get(`/orgs/${orgId}/alerts`)).text()).not.toContain('docs/dashboard.md');
    // Each anchor is a heading of that language's guide, as the API's page gives headings ids.
    for (const [file, anchor] of [['docs/getting-started.md', 'alert-webhooks'], ['docs/getting-started.it.md', 'webhook-degli-avvisi']] as const) {
      const headings = readFileSync(new URL(`../${file}`, import.meta.url), 'utf8').split('\n').filter((line) => line.startsWith('#')).map((line) => headingSlug(line.replace(/^#+\s*/, '')));
      expect(headings, file).toContain(anchor);
    }
  });
});

describe('when keys are rotated', () => {
  it('then the Activity page says the grace period as the rotate form offered it, and "revoked at once" for none, in English and Italian', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Rotation wording test');
    const page = `/orgs/${orgId}/keys`;
    for (const [name, graceSeconds] of [['hour key', '3600'], ['week key', '604800'], ['now key', '0']] as const) {
      const key = await createApiKey(env.db, { organizationId: orgId, name });
      expect((await client.post(`${page}/${key.record.id}/rotate`, { _csrf: await client.csrf(page), graceSeconds })).status).toBe(303);
    }
    const activity = async () => (await (await client.get(`/orgs/${orgId}/activity`)).text()).replaceAll('&#39;', "'");
    const english = await activity();
    expect(english).toMatch(/Rotated API key hour key \(sk_live_\w+…\) into hour key \(sk_live_\w+…\) \(old key left working for 1 hour\)/);
    expect(english).toMatch(/Rotated API key week key [^<]* \(old key left working for 7 days\)/);
    expect(english).toMatch(/Rotated API key now key [^<]* \(old key revoked at once\)/);
    expect(english).not.toMatch(/\d s\)/);
    client.jar.set('dash_lang', 'it');
    const italian = await activity();
    expect(italian).toMatch(/Ruotata la chiave API hour key [^<]* \(la vecchia lasciata attiva per 1 ora\)/);
    expect(italian).toMatch(/Ruotata la chiave API week key [^<]* \(la vecchia lasciata attiva per 7 giorni\)/);
    expect(italian).toMatch(/Ruotata la chiave API now key [^<]* \(la vecchia revocata subito\)/);
    expect(italian).not.toMatch(/\d s\)/);
  });
});

describe('when an admin makes a password reset link', () => {
  it('then its panel says the current password works until the link is used, not until it expires, in English and Italian', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Reset wording test');
    const member = await createMember(env.db, orgId, 'finance');
    const page = `/orgs/${orgId}/members`;
    const panel = async () => {
      const body = await (await client.get(page)).text();
      const form = body.slice(body.indexOf(`action="/orgs/${orgId}/members/${member.userId}/password-reset"`));
      const hidden = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(form)![1]!;
      const res = await client.post(`${page}/${member.userId}/password-reset`, { _csrf: hidden('_csrf'), _submission: hidden('_submission') });
      expect(res.status).toBe(303);
      return (await (await client.get(page)).text()).replaceAll('&#39;', "'");
    };
    const english = await panel();
    expect(english).toContain('their current password keeps working until they use the link, which ends the old password and every session of theirs at once.');
    expect(english).not.toContain('works until then');
    client.jar.set('dash_lang', 'it');
    const italian = await panel();
    expect(italian).toContain('quella attuale resta valida finché non usa il link, che disattiva subito la vecchia password e chiude tutte le sue sessioni.');
    expect(italian).not.toContain('fino ad allora');
  });
});
