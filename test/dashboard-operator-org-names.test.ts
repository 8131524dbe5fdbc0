import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createOrganization } from '../core/billing/index.js';
import { dashboardForFile, hiddenFieldsOf, signedInOperator } from './dashboard-fixtures.js';

// The operator's "create organization" form refuses a name another organization has (in any
// case, with any spacing), naming that organization, until its checkbox says to make another.

const env = dashboardForFile();

const FORM = '/operator/organizations';
const uniqueName = (what: string) => `${what} ${randomUUID().slice(0, 8)} SRL`;
const organizationsNamed = async (name: string) =>
  (await env.db('organizations').whereRaw("lower(btrim(regexp_replace(name, '\\s+', ' ', 'g'))) = lower(?)", [name]).orderBy('created_at').select<{ id: string }[]>('id')).map((o) => o.id);

type Client = Awaited<ReturnType<typeof signedInOperator>>;
/** The create form as the overview draws it (its CSRF and one-time submission tokens), filled in. */
const createForm = async (client: Client, fields: Record<string, string>) => ({ ...(await client.hiddenFields('/operator', FORM)), ...fields });

describe('when an operator creates an organization whose name another one has', () => {
  it('then the form comes back (422) naming and linking that organization under the name, with a checkbox that, ticked, makes another', async () => {
    const name = uniqueName('Operator twin');
    const existing = await createOrganization(env.db, { name, planId: 'standard' });
    const client = await signedInOperator(env);
    expect(await (await client.get('/operator')).text()).not.toContain('name="allowDuplicateName"');

    const typed = `  ${name.toLowerCase().replaceAll(' ', '   ')} `;
    const refused = await client.post(FORM, await createForm(client, { name: typed, planId: 'standard' }));
    expect(refused.status).toBe(422);
    const body = await refused.text();
    expect(body).toContain(`Please check the form: Name: already the name of organization ${existing.id}`);
    expect(body).toContain(
      `<p class="field-error" id="org-name-error">already the name of organization <a href="/operator/organizations/${existing.id}">${name}</a> (<code>${existing.id}</code>): use that one, or tick “Create another organization with this name” and send the form again.</p>`,
    );
    // The name as typed, marked refused for screen readers too.
    expect(body).toContain(`<input id="org-name" name="name" type="text" value="${typed}" required aria-invalid="true" aria-describedby="org-name-error">`);
    expect(body).toContain('<label class="check"><input type="checkbox" name="allowDuplicateName" value="1" id="org-allow-duplicate"> <span>Create another organization with this name</span></label>');
    expect(await organizationsNamed(name)).toEqual([existing.id]);

    // Sent again unticked: refused again. Ticked: made, and the answer leads to the new one.
    const again = await client.post(FORM, { ...hiddenFieldsOf(body, FORM), name: typed, planId: 'standard' });
    expect(again.status).toBe(422);
    const ticked = await client.post(FORM, { ...hiddenFieldsOf(await again.text(), FORM), name: typed, planId: 'standard', allowDuplicateName: '1' });
    expect(ticked.status).toBe(302);
    const made = await organizationsNamed(name);
    expect(made).toHaveLength(2);
    expect(made[0]).toBe(existing.id);
    expect(ticked.headers.get('location')).toBe(`/operator/organizations/${made[1]}?done=created`);
    // The page it leads to says what was done, and what comes next.
    const created = await (await client.get(ticked.headers.get('location')!)).text();
    expect(created).toContain('Organization created: invite its admin on this page, and set its credits and caps here if its plan&#39;s do not fit.');
    expect(created).not.toContain('Saved.');
  });

  it('then in Italian the reason, under the field, and the checkbox are in Italian', async () => {
    const name = uniqueName('Operatore gemella');
    const existing = await createOrganization(env.db, { name, planId: 'standard' });
    const client = await signedInOperator(env);
    await client.get('/language?lang=it&next=/');
    const refused = await client.post(FORM, await createForm(client, { name: name.toUpperCase(), planId: 'standard' }));
    expect(refused.status).toBe(422);
    const body = await refused.text();
    expect(body).toContain(`Controlla il modulo: Nome: è già il nome dell&#39;organizzazione ${existing.id}`);
    expect(body).toContain(
      `è già il nome dell&#39;organizzazione <a href="/operator/organizations/${existing.id}">${name}</a> (<code>${existing.id}</code>): usa quella, oppure spunta «Crea un&#39;altra organizzazione con questo nome» e invia di nuovo il modulo.`,
    );
    expect(body).toContain('<span>Crea un&#39;altra organizzazione con questo nome</span>');
    expect(body).not.toContain('already the name');
    const ticked = await client.post(FORM, { ...hiddenFieldsOf(body, FORM), name: name.toUpperCase(), planId: 'standard', allowDuplicateName: '1' });
    expect(ticked.status).toBe(302);
    expect(await organizationsNamed(name)).toHaveLength(2);
  });
});

describe('when the same "create organization" form reaches the dashboard twice at once', () => {
  it('then, sent without a submission token (a page drawn before tokens, a script), one organization is made and the other answer names it', async () => {
    const name = uniqueName('Operator racing form');
    const client = await signedInOperator(env);
    const form = { _csrf: await client.csrf('/operator'), name, planId: 'standard' };
    const answers = await Promise.all([client.post(FORM, form), client.post(FORM, form)]);
    const made = await organizationsNamed(name);
    expect(made).toHaveLength(1);
    expect(answers.map((r) => r.status).sort()).toEqual([302, 422]);
    expect(answers.find((r) => r.status === 302)!.headers.get('location')).toBe(`/operator/organizations/${made[0]}?done=created`);
    expect(await answers.find((r) => r.status === 422)!.text()).toContain(`already the name of organization <a href="/operator/organizations/${made[0]}">`);
    expect(Number((await env.db('audit_log').where({ organization_id: made[0], action: 'organization.created' }).count<{ n: string }[]>({ n: '*' }))[0]!.n)).toBe(1);
  });

  it('then, sent by two operators at once with the same name, one organization is made', async () => {
    const name = uniqueName('Operators racing');
    const [one, two] = await Promise.all([signedInOperator(env), signedInOperator(env)]);
    const forms = await Promise.all([createForm(one, { name, planId: 'standard' }), createForm(two, { name: name.toLowerCase(), planId: 'standard' })]);
    const answers = await Promise.all([one.post(FORM, forms[0]), two.post(FORM, forms[1])]);
    expect(await organizationsNamed(name)).toHaveLength(1);
    expect(answers.map((r) => r.status).sort()).toEqual([302, 422]);
  });
});
