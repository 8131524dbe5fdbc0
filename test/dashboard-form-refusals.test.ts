import { describe, expect, it } from 'vitest';
import { adminOfNewOrg, createMember, dashboardForFile } from './dashboard-fixtures.js';

// Refusals of hand-made or mistyped forms: every bad field at once, each under its own field, in
// our words in the page's language (docs/dashboard.md: "under the field it concerns (every bad
// field at once)").

const env = dashboardForFile();

/** Why the field with this id was refused (the text under it), or undefined. */
const errorUnder = (body: string, id: string) => new RegExp(`<p class="field-error" id="${id}-error">([^<]*)</p>`).exec(body)?.[1];

describe('when the create-key form has several bad fields', () => {
  it('then each is refused under its field at once (name blank or spaces with a malformed, past or no date, or a mode not offered), in English and Italian, and no key is made', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Key form refusals test');
    const page = `/orgs/${orgId}/keys`;
    const create = async (form: Record<string, string>) => {
      const res = await client.post(page, { _csrf: await client.csrf(page), ...form });
      expect(res.status, JSON.stringify(form)).toBe(422);
      return res.text();
    };
    for (const name of ['', '   ']) {
      const malformed = await create({ name, expiresOn: '31/12/2030' });
      expect(errorUnder(malformed, 'key-name'), name).toBe('must not be empty');
      expect(errorUnder(malformed, 'key-expiry')).toBe('a date as YYYY-MM-DD (e.g. 2030-12-31), or blank for a key that never expires');
      const past = await create({ name, expiresOn: '2020-01-01' });
      expect(errorUnder(past, 'key-name')).toBe('must not be empty');
      expect(errorUnder(past, 'key-expiry')).toBe('must be in the future');
      const mode = await create({ name, mode: 'xx' });
      expect(errorUnder(mode, 'key-name')).toBe('must not be empty');
      expect(errorUnder(mode, 'key-mode')).toBe('must be live or test');
      expect(mode).toContain('Please check the form: Name: must not be empty; Mode: must be live or test');
    }
    // A control character in the name and a past date, together: core's own rule for the name.
    const control = await create({ name: 'a\tb', expiresOn: '2020-01-01' });
    expect(errorUnder(control, 'key-name')).toBe('must not contain line breaks, tabs or other control characters');
    expect(errorUnder(control, 'key-expiry')).toBe('must be in the future');
    const long = await create({ name: 'x'.repeat(101), mode: 'xx' });
    expect(errorUnder(long, 'key-name')).toBe('at most 100 characters');
    expect(errorUnder(long, 'key-mode')).toBe('must be live or test');

    client.jar.set('dash_lang', 'it');
    const italian = await create({ name: ' ', expiresOn: '2020-01-01', mode: 'xx' });
    expect(errorUnder(italian, 'key-name')).toBe('non può essere vuoto');
    expect(errorUnder(italian, 'key-expiry')).toBe('deve essere nel futuro');
    expect(errorUnder(italian, 'key-mode')).toBe('deve essere live o test');
    expect(await env.db('api_keys').where({ organization_id: orgId }).first()).toBeUndefined();

    // A good form still makes its key, its name trimmed as before.
    const made = await client.post(page, { _csrf: await client.csrf(page), name: '  ci key ', expiresOn: '2099-12-31' });
    expect(made.status).toBe(303);
    expect(await env.db('api_keys').where({ organization_id: orgId }).pluck('name')).toEqual(['ci key']);
  });
});

describe('when a hand-made request sends a threshold condition the form does not offer', () => {
  it('then it is refused under the "When" field in our words, not under the value, in English and Italian, and nothing is saved', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Threshold kind refusal test');
    const page = `/orgs/${orgId}/alerts`;
    const add = async (kind: string, value: string) => {
      const res = await client.post(`${page}/thresholds`, { _csrf: await client.csrf(page), kind, value });
      expect(res.status).toBe(422);
      return res.text();
    };
    const body = await add('bogus', '80');
    expect(errorUnder(body, 'threshold-kind')).toBe('must be one of the conditions the list offers');
    expect(errorUnder(body, 'threshold-value')).toBeUndefined();
    expect(body).toMatch(/<select id="threshold-kind" name="kind" aria-invalid="true" aria-describedby="threshold-kind-error">/);
    expect(body).toContain('Please check the form: When: must be one of the conditions the list offers');
    expect(body).toMatch(/<input id="threshold-value"[^>]*value="80"/);
    client.jar.set('dash_lang', 'it');
    const italian = await add('bogus', '80');
    expect(errorUnder(italian, 'threshold-kind')).toBe('deve essere una delle condizioni dell&#39;elenco');
    expect(italian).toContain('Controlla il modulo: Quando: deve essere una delle condizioni dell&#39;elenco');
    expect(await env.db('alert_thresholds').where({ organization_id: orgId })).toEqual([]);
  });
});

describe('when a hand-made request sends a member role the form does not offer', () => {
  it('then a role change to "owner" is refused under that member\'s role in a sentence naming the field, in English and Italian, and nothing changes', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Member role refusal test');
    const member = await createMember(env.db, orgId, 'finance');
    const page = `/orgs/${orgId}/members`;
    const change = async () => {
      const res = await client.post(`${page}/${member.userId}/role`, { _csrf: await client.csrf(page), role: 'owner' });
      expect(res.status).toBe(422);
      return res.text();
    };
    const body = await change();
    expect(body).not.toContain('Invalid option');
    expect(body).toContain('Please check the form: Role: must be one of the roles the list offers: admin or finance');
    expect(errorUnder(body, `role-${member.userId}`)).toBe('must be one of the roles the list offers: admin or finance');
    expect(body).toMatch(new RegExp(`<select id="role-${member.userId}" name="role" aria-invalid="true" aria-describedby="role-${member.userId}-error">`));
    client.jar.set('dash_lang', 'it');
    const italian = await change();
    expect(italian).not.toContain('Opzione non valida');
    expect(italian).toContain('Controlla il modulo: Ruolo: deve essere uno dei ruoli dell&#39;elenco: amministratore oppure amministrazione e finanza');
    expect(errorUnder(italian, `role-${member.userId}`)).toBe('deve essere uno dei ruoli dell&#39;elenco: amministratore oppure amministrazione e finanza');
    expect((await env.db('memberships').where({ organization_id: orgId, user_id: member.userId }).first<{ role: string }>('role'))!.role).toBe('finance');
  });

  it('then an invitation as "owner" with a bad address is refused under both fields at once, and no one is invited', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Invite role refusal test');
    const page = `/orgs/${orgId}/members`;
    const res = await client.post(`${page}/invite`, { _csrf: await client.csrf(page), email: 'not an address', role: 'owner' });
    expect(res.status).toBe(422);
    const body = await res.text();
    expect(errorUnder(body, 'invite-email')).toBe('Enter an e-mail address like name@company.it');
    expect(errorUnder(body, 'invite-role')).toBe('must be one of the roles the list offers: admin or finance');
    expect(body).not.toContain('Invalid option');
    expect(await env.db('invitations').where({ organization_id: orgId })).toEqual([]);
  });
});
