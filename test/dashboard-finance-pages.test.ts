import { describe, expect, it } from 'vitest';
import { adminOfNewOrg, dashboardForFile } from './dashboard-fixtures.js';

// The finance pages over plain HTTP, with addresses people (or their bookmarks) get wrong.

const env = dashboardForFile();

describe('finance pages', () => {
  it('when the month in the address is past what the pages can show (9999-12), then usage, report and CSV show the current month instead of failing', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Finance far period test');
    for (const path of ['usage', 'report', 'report.csv', 'ledger']) {
      const res = await client.get(`/orgs/${orgId}/${path}?period=9999-12`);
      expect(res.status, path).toBe(200);
    }
    const csv = await (await client.get(`/orgs/${orgId}/report.csv?period=9999-12`)).text();
    const thisMonth = new Date().toISOString().slice(0, 7);
    expect(csv).toContain(`summary,period,,${thisMonth},,,`);
  });
});
