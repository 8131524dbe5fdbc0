import { describe, expect, it } from 'vitest';
import { setWebhookUrl } from '../core/alerts/index.js';
import { changeCredits, createOrganization, MAX_REASON } from '../core/billing/index.js';
import { createInvitation } from '../core/dashboard-auth/index.js';
import { AppError } from '../core/errors/index.js';
import { adminOfNewOrg, dashboardForFile } from './dashboard-fixtures.js';

// Text a person types that is then repeated in full elsewhere (a reason on every report line, an
// invited address on the members and activity pages) has a length limit, and an address too
// long is refused for its length, not called "not an http(s) URL". Nothing is written.
const env = dashboardForFile();

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  if (!(err instanceof AppError)) throw new Error(`expected an AppError, got ${String(err)}`);
  return err;
}

describe('text a person types', () => {
  it('when a ledger reason is longer than 500 characters then it is refused naming the limit, and nothing is booked', async () => {
    const org = await createOrganization(env.db, { name: `Long reason ${Date.now()} SRL`, planId: 'standard' });
    const rows = async () => (await env.db('usage_ledger').where({ organization_id: org.id })).length;
    const before = await rows();
    const err = await refusal(changeCredits(env.db, { organizationId: org.id, kind: 'top_up', credits: 5, actor: 'test', reason: 'r'.repeat(MAX_REASON + 1) }));
    expect(err).toMatchObject({ code: 'invalid_params', details: [{ path: 'reason', message: `at most ${MAX_REASON} characters` }] });
    expect(await rows()).toBe(before);
    await changeCredits(env.db, { organizationId: org.id, kind: 'top_up', credits: 5, actor: 'test', reason: 'r'.repeat(MAX_REASON) });
    expect(await rows()).toBe(before + 1);
  });

  it('when an invited address is longer than an address can be then it is refused, and no invitation is made', async () => {
    const org = await createOrganization(env.db, { name: `Long address ${Date.now()} SRL`, planId: 'standard' });
    const err = await refusal(createInvitation(env.db, { organizationId: org.id, email: `${'y'.repeat(250)}@example.com`, role: 'admin', invitedBy: 'usr_test' }));
    expect(err).toMatchObject({ code: 'invalid_params', details: [expect.objectContaining({ path: 'email' })] });
    expect(await env.db('invitations').where({ organization_id: org.id })).toEqual([]);
  });

  it('when a webhook address is longer than 2,000 characters then the refusal says so, not that it is no http(s) URL, in the page too', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Long webhook address test');
    const url = `https://hooks.example.com/${'a'.repeat(2_100)}`;
    const err = await refusal(setWebhookUrl(env.db, orgId, url));
    expect(err).toMatchObject({ code: 'invalid_params', message: 'The webhook address must be at most 2000 characters.', details: [{ path: 'webhookUrl', message: 'at most 2000 characters' }] });
    client.jar.set('dash_lang', 'it');
    const page = `/orgs/${orgId}/alerts`;
    const res = await client.post(`${page}/webhook`, { _csrf: await client.csrf(page), webhookUrl: url });
    const body = await res.text();
    expect(res.status).toBe(422);
    expect(body).not.toMatch(/http\(s\)/);
    expect(body).toMatch(/2000/);
  });
});
