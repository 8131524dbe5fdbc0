import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDb, type Db } from '../../db/index.js';
import { AppError } from '../../errors/index.js';
import { standardPlan } from './default-plans.js';
import { ensurePlan } from './plan-store.js';

// A plan's limits are held to the same rule as an organization's overrides: a burst or a
// per-minute limit below the per-second one contradicts it.
const databaseUrl = inject('databaseUrl');
let db: Db;

beforeAll(() => {
  db = createDb({ connectionString: databaseUrl, poolMax: 2 });
});
afterAll(async () => {
  await db.destroy();
});

describe('ensurePlan', () => {
  it('when a plan\'s burst and per-minute limits are below its per-second limit, then it is refused naming both and nothing is stored', async () => {
    const id = `test-contradictory-${randomUUID().slice(0, 8)}`;
    const refusal = await ensurePlan(db, { ...standardPlan, id, limits: { perSecond: 20, burst: 5, perMinute: 10 } }).then(
      () => null,
      (err: unknown) => err,
    );
    expect(refusal).toBeInstanceOf(AppError);
    expect((refusal as AppError).code).toBe('invalid_params');
    expect((refusal as AppError).details).toEqual([
      { path: 'limits.burst', message: 'must be at least the per-second limit (20)' },
      { path: 'limits.perMinute', message: 'must be at least the per-second limit (20)' },
    ]);
    expect(await db('plans').where({ id }).first()).toBeUndefined();
  });

  it('when its limits agree, then the plan is stored with them', async () => {
    const id = `test-agreeing-${randomUUID().slice(0, 8)}`;
    await ensurePlan(db, { ...standardPlan, id, limits: { perSecond: 20, burst: 20, perMinute: 1200 } });
    expect(await db('plans').where({ id }).first('rate_per_second', 'burst', 'rate_per_minute')).toEqual({ rate_per_second: 20, burst: 20, rate_per_minute: 1200 });
  });
});
