import { afterAll, describe, expect, inject, it } from 'vitest';
import { createDb } from '../core/db/index.js';
import { createLogger } from '../core/logging/index.js';
import { createPostgresUsageSink } from '../core/usage/index.js';
import { createCompanyStore } from '../core/companies/company-store.js';
import { createTestOrganization, insertCompanies, makeDossier, startTestApi, viaPort } from './api-fixtures.js';
import { hostAndPort, startTcpProxy } from './support/tcp-proxy.js';

// What an operator reads in the API's log when the database holding plans and allowances goes
// away for a while and comes back: which dependency, why, and when calls are served again.

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe('the API while the database of plans and allowances is away', () => {
  it('then it says once that it cannot read them from the database and why, and once that they are readable again', async () => {
    const url = inject('databaseUrl');
    const proxy = await startTcpProxy(hostAndPort(url));
    cleanups.push(() => proxy.close());
    const direct = createDb({ connectionString: url, poolMax: 2 });
    cleanups.push(() => direct.destroy());
    const lines: { level: string; msg: string; cause?: string; unavailableForMs?: number }[] = [];
    const api = await startTestApi({
      databaseUrl: viaPort(url, proxy.port),
      entitlementCacheTtlMs: 50,
      logger: createLogger({ level: 'info', write: (line) => lines.push(JSON.parse(line)) }),
      store: createCompanyStore({ db: direct, queryTimeoutMs: 2_000, logger: createLogger({ level: 'silent' }) }),
      usage: createPostgresUsageSink(direct, { logger: createLogger({ level: 'silent' }) }),
    });
    cleanups.push(() => api.close());
    const company = makeDossier();
    await insertCompanies(direct, [company]);
    const org = await createTestOrganization(direct);
    const call = () => fetch(`${api.url}/companies/${company.fiscalCode}/financials`, { headers: { Authorization: `Bearer ${org.key}` } }).then((res) => res.status);
    expect(await call()).toBe(200);

    proxy.cut();
    const refused: number[] = [];
    for (let i = 0; i < 5; i++) {
      refused.push(await call());
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    expect(refused).toEqual(Array(5).fill(503));
    proxy.restore();
    const deadline = Date.now() + 20_000;
    while ((await call()) !== 200) {
      if (Date.now() > deadline) throw new Error('calls not served again');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }

    const said = lines.filter((l) => /plans and allowances/.test(l.msg));
    expect(said.map((l) => [l.level, l.msg]), JSON.stringify(lines.slice(-8))).toEqual([
      ['warn', 'cannot read plans and allowances from the database: paid calls get entitlement_unavailable until it answers'],
      ['info', 'plans and allowances readable again; paid calls are served'],
    ]);
    expect(said[0]!.cause).toMatch(/database/);
    expect(said[1]!.unavailableForMs).toBeGreaterThan(1_000);
  }, 60_000);
});
