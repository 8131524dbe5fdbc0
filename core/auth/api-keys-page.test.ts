import { afterAll, describe, expect, it } from 'vitest';
import { createOrganization } from '../billing/index.js';
import { testDb } from '../../test/support/database.js';
import { apiKeyState } from './api-key-record.js';
import { apiKeysPage, apiKeyStates } from './api-keys-page.js';
import { createApiKey } from './manage-api-keys.js';

const db = testDb();
afterAll(() => db.destroy());

describe('when an organization\'s keys are read a page at a time', () => {
  it('then keys made in the same instant keep one order: the pages hold each key once, newest first by id', async () => {
    const org = await createOrganization(db, { name: 'Keys page order test', planId: null });
    for (let i = 0; i < 7; i++) await createApiKey(db, { organizationId: org.id, name: `k${i}` });
    await db('api_keys').where({ organization_id: org.id }).update({ created_at: new Date('2026-01-01T00:00:00Z') });
    const pages = await Promise.all([1, 2, 3].map((page) => apiKeysPage(db, org.id, { page, pageSize: 3 })));
    expect(pages.map((p) => [p.page, p.pages, p.total, p.rows.length])).toEqual([[1, 3, 7, 3], [2, 3, 7, 3], [3, 3, 7, 1]]);
    const ids = pages.flatMap((p) => p.rows.map((k) => k.id));
    expect(ids).toEqual([...ids].sort().reverse());
    expect(new Set(ids).size).toBe(7);
  });

  it('then each state filter picks exactly the keys apiKeyState puts in it, an expiry of this very instant included', async () => {
    const org = await createOrganization(db, { name: 'Keys page state test', planId: null });
    const now = new Date();
    const make = async (name: string, change: Record<string, Date | null> = {}) => {
      const { record } = await createApiKey(db, { organizationId: org.id, name });
      if (Object.keys(change).length > 0) await db('api_keys').where({ id: record.id }).update(change);
    };
    await make('never expires');
    await make('expires later', { expires_at: new Date(now.getTime() + 60_000) });
    await make('expires now', { expires_at: now });
    await make('expired', { expires_at: new Date(now.getTime() - 60_000) });
    await make('revoked', { revoked_at: now });
    await make('revoked and expired', { revoked_at: now, expires_at: new Date(now.getTime() - 60_000) });

    const all = await apiKeysPage(db, org.id, { now });
    expect(all.counts).toEqual({ all: 6, active: 2, expired: 2, revoked: 2 });
    for (const state of apiKeyStates) {
      const page = await apiKeysPage(db, org.id, { state, now });
      const expected = all.rows.filter((k) => apiKeyState(k, now) === state).map((k) => k.name);
      expect(page.rows.map((k) => k.name), state).toEqual(expected);
      expect(page.total, state).toBe(expected.length);
    }
  });
});
