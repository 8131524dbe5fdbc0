import { describe, expect, it } from 'vitest';
import { adminOfNewOrg, dashboardForFile, httpSession } from './dashboard-fixtures.js';

// A refused form is answered at the address it was sent to; opened again as a page (Enter in the
// address bar), that address goes to the page the form is on, not to "This page does not exist".

const env = dashboardForFile();

describe('a form\'s address opened as a page', () => {
  it('when a form\'s own address is opened with GET then it answers 303 to the page the form is on; a path no route has is still 404', async () => {
    const { orgId, adminId, client } = await adminOfNewOrg(env, 'Form address test');
    for (const [form, page] of [
      [`/orgs/${orgId}/members/${adminId}/role`, `/orgs/${orgId}/members`],
      [`/orgs/${orgId}/members/invite`, `/orgs/${orgId}/members`],
    ]) {
      const res = await client.get(form!);
      expect(res.status, form).toBe(303);
      expect(res.headers.get('location'), form).toBe(page);
      expect((await client.get(page!)).status).toBe(200);
    }
    expect((await client.get(`/orgs/${orgId}/members/${adminId}/no-such-form`)).status).toBe(404);
    // Never another site's address, whatever the path's slashes: an encoded pair stays a segment.
    const slashes = await client.get('/orgs/%2F%2Fevil.example/members/invite');
    expect(slashes.status).toBe(303);
    expect(slashes.headers.get('location')).toBe('/orgs/%2F%2Fevil.example/members');
    // Not signed in: to the sign-in page first, as for any page.
    const anonymous = await httpSession(env.dashboard.url).get(`/orgs/${orgId}/members/invite`);
    expect(anonymous.headers.get('location')).toMatch(/^\/sign-in\?next=/);
  });
});
