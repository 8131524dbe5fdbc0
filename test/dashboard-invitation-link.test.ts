import { describe, expect, it } from 'vitest';
import { createInvitation } from '../core/dashboard-auth/index.js';
import { saidWithVowel } from '../dashboard/i18n/italian-articles.js';
import { formats } from '../dashboard/i18n/translate.js';
import { adminOfNewOrg, dashboardForFile, httpSession, uniqueEmail } from './dashboard-fixtures.js';

// An invitation link that no longer opens, as the person invited meets it: headed as what it is,
// not "Something went wrong" (which reads as our failure), and an expired one says when, and to
// which organization, rather than list every reason a link may fail.

const env = dashboardForFile();

describe('an invitation link that no longer opens', () => {
  it('when it expired then the page says it no longer works, to which organization and when it expired, in both languages, with 404', async () => {
    const { orgId, adminId } = await adminOfNewOrg(env, 'Expired invitation test');
    const { token } = await createInvitation(env.db, { organizationId: orgId, email: uniqueEmail('late'), role: 'finance', invitedBy: adminId });
    const expiresAt = new Date(Date.now() - 3_600_000);
    await env.db('invitations').where({ organization_id: orgId }).update({ expires_at: expiresAt });
    const visitor = httpSession(env.dashboard.url);
    const res = await visitor.get(`/invitations/${token}`);
    expect(res.status).toBe(404);
    const english = await res.text();
    expect(english).toContain('<h1>This invitation link no longer works</h1>');
    expect(english).toContain(`This invitation to Expired invitation test expired on ${formats('en').dateTime(expiresAt)}. Ask whoever invited you for a new one.`);
    expect(english).not.toContain('Something went wrong');
    visitor.jar.set('dash_lang', 'it');
    const italian = await (await visitor.get(`/invitations/${token}`)).text();
    const at = formats('it').dateTime(expiresAt);
    expect(italian).toContain('<h1>Questo link di invito non funziona più</h1>');
    expect(italian).toContain(`Questo invito a Expired invitation test è scaduto ${saidWithVowel(at) ? 'l&#39;' : 'il '}${at}. Chiedine uno nuovo a chi te l&#39;ha mandato.`);
  });

  it('when it is no invitation (cancelled, or cut short when copied) then the page gives the reasons it may have, under the same heading, with 404', async () => {
    const res = await httpSession(env.dashboard.url).get('/invitations/not-a-whole-token');
    expect(res.status).toBe(404);
    const body = await res.text();
    expect(body).toContain('<h1>This invitation link no longer works</h1>');
    expect(body).toContain('This invitation link is not valid any more: it was used, cancelled, or it expired');
  });
});
