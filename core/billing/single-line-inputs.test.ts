import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDb, type Db } from '../db/index.js';
import { AppError } from '../errors/index.js';
import { changeCredits } from './adjust-allowance.js';
import { createOrganization, ensureDefaultPlans } from './plans/index.js';

// Organization names and ledger reasons are printed on one line (the CLI's tables, an
// operator's terminal, the report's CSV): a line break or an ESC sequence in one is refused
// with invalid_params naming the field, and nothing is written.
let db: Db;
beforeAll(async () => {
  db = createDb({ connectionString: inject('databaseUrl'), poolMax: 2 });
  await ensureDefaultPlans(db);
});
afterAll(async () => {
  await db.destroy();
});

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  if (!(err instanceof AppError)) throw new Error(`expected an AppError, got ${String(err)}`);
  return err;
}

const controlMessage = 'must not contain line breaks, tabs or other control characters';

describe('when a name or a reason holds a control character', () => {
  it('then an organization named across two lines is refused, and none is made', async () => {
    const name = `Acme ${Date.now()}\nSecond line SpA`;
    const err = await refusal(createOrganization(db, { name, planId: 'standard' }));
    expect(err.code).toBe('invalid_params');
    expect(err.details).toEqual([{ path: 'name', message: controlMessage }]);
    expect(await db('organizations').where({ name })).toHaveLength(0);
  });

  it('then a ledger reason with a terminal escape is refused, and the balance and ledger are unchanged', async () => {
    const org = await createOrganization(db, { name: `Single line reason ${Date.now()} SRL`, planId: 'standard' });
    const ledger = () => db('usage_ledger').where({ organization_id: org.id }).count<{ n: string }[]>({ n: '*' });
    const before = await ledger();
    const err = await refusal(changeCredits(db, { organizationId: org.id, kind: 'top_up', credits: 5, actor: 'test', reason: 'bonus \u001b[2J' }));
    expect(err.details).toEqual([{ path: 'reason', message: controlMessage }]);
    expect(await ledger()).toEqual(before);
  });
});
