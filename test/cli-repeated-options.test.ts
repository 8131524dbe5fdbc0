import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { testDb } from './support/database.js';
import { runCli } from './support/run-cli.js';

const cli = (...args: string[]) => runCli(inject('databaseUrl'), ...args);
const db = testDb({ poolMax: 2 });
afterAll(() => db.destroy());

async function newOrganization(): Promise<string> {
  const created = await cli('org', 'create', '--name', `CLI repeated ${randomUUID()} SRL`);
  expect(created.code, created.stderr).toBe(0);
  return created.stdout.trim();
}
const ledgerRows = async (org: string) => Number((await db('usage_ledger').where({ organization_id: org }).count<{ n: string }[]>({ n: '*' }))[0]!.n);

describe('cli options given twice', () => {
  it('when an option is given twice then the command is refused naming it, and nothing changes', async () => {
    const [first, second] = await Promise.all([newOrganization(), newOrganization()]);
    const before = await Promise.all([ledgerRows(first), ledgerRows(second)]);
    const [credits, org, flag, list] = await Promise.all([
      cli('billing', 'top-up', '--org', first, '--credits', '5', '--credits', '500', '--reason', 'x'),
      cli('billing', 'top-up', '--org', first, '--credits', '5', '--reason', 'x', '--org', second),
      cli('key', 'create', '--org', first, '--name', 'twice', '--test', '--test'),
      cli('reconcile', '--org', first, '--org', second),
    ]);
    expect(credits).toMatchObject({ code: 1, stdout: '', stderr: "error: option '--credits <n>' is given more than once: give it once\n(see: cli billing top-up --help)\n" });
    expect(org).toMatchObject({ code: 1, stdout: '', stderr: "error: option '--org <org>' is given more than once: give it once\n(see: cli billing top-up --help)\n" });
    expect(flag).toMatchObject({ code: 1, stdout: '', stderr: "error: option '--test' is given more than once: give it once\n(see: cli key create --help)\n" });
    expect(await Promise.all([ledgerRows(first), ledgerRows(second)])).toEqual(before);
    expect(await db('api_keys').where({ organization_id: first })).toEqual([]);
    // A list option given again adds to its list: both organizations are checked.
    expect(list.stdout, list.stderr).toMatch(/^checked 2 organizations, /);
  });
});
