import { describe, expect, it } from 'vitest';
import { createApiKey, hashApiKey } from '../core/auth/index.js';
import { adminOfNewOrg, dashboardForFile } from './dashboard-fixtures.js';

// The keys page over HTTP: rotation with a grace period, expiry dates, and the one-time display.

const env = dashboardForFile();


describe('when an admin rotates a key', () => {
  it('then a new key is shown once and the old one expires after the chosen grace period', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Rotation test');
    const old = await createApiKey(env.db, { organizationId: orgId, name: 'billing sync' });
    const token = await client.csrf(`/orgs/${orgId}/keys`);
    const before = Date.now();
    const res = await client.post(`/orgs/${orgId}/keys/${old.record.id}/rotate`, { _csrf: token, graceSeconds: '3600' });
    expect(res.status).toBe(201);
    const newKey = /<code id="new-key"[^>]*>(sk_live_[0-9A-Za-z]{32})<\/code>/.exec(await res.text())![1]!;
    const stored = await env.db('api_keys').where({ hash: hashApiKey(newKey) }).first();
    expect(stored).toMatchObject({ organization_id: orgId, name: 'billing sync', rotated_from: old.record.id, revoked_at: null });
    const previous = await env.db('api_keys').where({ id: old.record.id }).first();
    expect(previous.revoked_at).toBeNull();
    expect(previous.expires_at.getTime()).toBeGreaterThanOrEqual(before + 3_600_000 - 1_000);
    expect(previous.expires_at.getTime()).toBeLessThanOrEqual(Date.now() + 3_600_000);
    // Shown once: the list afterwards has only prefixes.
    const list = await (await client.get(`/orgs/${orgId}/keys`)).text();
    expect(list).not.toContain(newKey);
    expect(list).toContain(`${newKey.slice(0, 12)}…`);
    expect(list).toContain('Expiring');
  });

  it('then a grace period of zero revokes the old key at once', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Rotation now test');
    const old = await createApiKey(env.db, { organizationId: orgId, name: 'compromised' });
    await client.post(`/orgs/${orgId}/keys/${old.record.id}/rotate`, { _csrf: await client.csrf(`/orgs/${orgId}/keys`), graceSeconds: '0' });
    expect((await env.db('api_keys').where({ id: old.record.id }).first()).revoked_at).not.toBeNull();
  });
});

describe('when an admin creates a key with an expiry date', () => {
  it('then it expires at the end of that day (UTC), and a past date is refused', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Expiry test');
    const token = await client.csrf(`/orgs/${orgId}/keys`);
    const ok = await client.post(`/orgs/${orgId}/keys`, { _csrf: token, name: 'temporary', expiresOn: '2099-03-31' });
    expect(ok.status).toBe(201);
    expect((await env.db('api_keys').where({ organization_id: orgId, name: 'temporary' }).first()).expires_at.toISOString()).toBe('2099-03-31T23:59:59.999Z');
    const past = await client.post(`/orgs/${orgId}/keys`, { _csrf: token, name: 'already expired', expiresOn: '2001-01-01' });
    expect(past.status).toBe(422);
    expect(await env.db('api_keys').where({ organization_id: orgId, name: 'already expired' }).first()).toBeUndefined();
  });
});
