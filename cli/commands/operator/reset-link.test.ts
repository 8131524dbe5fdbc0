import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createOrganization, ensureDefaultPlans } from '../../../core/billing/index.js';
import { createDb, type Db } from '../../../core/db/index.js';
import { writeDemoFile } from '../start/demo-credentials.js';
import { createMember } from '../../../test/dashboard-fixtures.js';
import { runCliWithEnv } from '../../../test/support/run-cli.js';

// `operator reset-link` where PUBLIC_DASHBOARD_URL is unset: run in a container listening on
// every interface (`docker compose exec api …`, HOST 0.0.0.0) it printed
// http://0.0.0.0:3002/password-reset/…, which opens nothing; next to an `npm start` on another
// DASHBOARD_PORT it printed the default port. Now the second takes the address that start wrote
// in DATA_DIR's demo.json, and the first is refused, before any link is made.
const databaseUrl = inject('databaseUrl');
let db: Db;
let dataDir: string;

beforeAll(async () => {
  db = createDb({ connectionString: databaseUrl, poolMax: 2 });
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cli-reset-link-'));
});
afterAll(async () => {
  await db?.destroy();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

const resetsOf = (userId: string) => db('password_resets').where({ user_id: userId }).count<{ count: string }[]>('* as count').then((r) => Number(r[0]!.count));

describe('operator reset-link without PUBLIC_DASHBOARD_URL', () => {
  it("when HOST is 0.0.0.0 then it refuses, saying to set PUBLIC_DASHBOARD_URL, and makes no link; when DATA_DIR has demo.json then the link is on that start's dashboard address", async () => {
    await ensureDefaultPlans(db);
    const org = await createOrganization(db, { name: 'Reset link address SRL', planId: 'standard' });
    const [everywhere, besideStart] = [await createMember(db, org.id, 'admin'), await createMember(db, org.id, 'admin')];
    const startDir = path.join(dataDir, 'started');
    await writeDemoFile(startDir, { apiKey: 'sk_live_x', organizationId: org.id, baseUrl: 'http://127.0.0.1:4400', mcpUrl: 'http://127.0.0.1:4401', dashboardUrl: 'http://127.0.0.1:4402', sampleFiscalCodes: [] });
    const env = { DATABASE_URL: databaseUrl, LOG_LEVEL: 'error', PUBLIC_DASHBOARD_URL: undefined };
    const [refused, fromDemo] = await Promise.all([
      runCliWithEnv({ ...env, HOST: '0.0.0.0', DASHBOARD_PORT: '3002', DATA_DIR: path.join(dataDir, 'none') }, 'operator', 'reset-link', '--email', everywhere.email),
      runCliWithEnv({ ...env, HOST: '127.0.0.1', DASHBOARD_PORT: '3002', DATA_DIR: startDir }, 'operator', 'reset-link', '--email', besideStart.email),
    ]);

    expect(refused).toEqual({
      code: 1,
      stdout: '',
      stderr: "error: the dashboard's address here would be http://0.0.0.0:3002, where 0.0.0.0 means every interface, not an address to open: set PUBLIC_DASHBOARD_URL to the address people open the dashboard at (e.g. PUBLIC_DASHBOARD_URL=https://dashboard.example.com); no link was made\n",
    });
    expect(await resetsOf(everywhere.userId)).toBe(0);

    expect(fromDemo.code, fromDemo.stderr).toBe(0);
    expect(fromDemo.stdout).toMatch(/^http:\/\/127\.0\.0\.1:4402\/password-reset\/[A-Za-z0-9_-]{43}\n$/);
    expect(await resetsOf(besideStart.userId)).toBe(1);
  }, 120_000);
});
