// The words a worker's log line uses when the database is the trouble (the rollover sweep, the
// Kafka consumer's outage line), from the errors a real pool gives: knex's own for a server
// that stopped answering ("Timeout acquiring a connection. The pool is probably full. Are you
// missing a .transacting(trx) call?") sent an operator looking for a leak.
import { afterEach, describe, expect, inject, it } from 'vitest';
import { createDb, databaseUnavailableReason, describeDatabaseFailure, type Db } from '../core/db/index.js';
import { createLogger } from '../core/logging/index.js';
import { hostAndPort, startTcpProxy, type TcpProxy } from './support/tcp-proxy.js';

const logger = createLogger({ level: 'silent' });
let db: Db | undefined;
let proxy: TcpProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  await db?.destroy();
  db = undefined;
  proxy = undefined;
});

async function failureOf(query: Promise<unknown>): Promise<unknown> {
  return query.then(() => {
    throw new Error('the query succeeded');
  }, (err: unknown) => err);
}

describe('databaseUnavailableReason', () => {
  it('when the server accepts connections and never answers then the pool\'s timeout is said as the database not answering in time', async () => {
    proxy = await startTcpProxy(hostAndPort(inject('databaseUrl')));
    proxy.freeze();
    db = createDb({ connectionString: proxy.urlFor(inject('databaseUrl')), poolMax: 1, logger });
    const err = await failureOf(db.raw('select 1'));
    expect(String((err as Error).message)).toContain('Are you missing a .transacting(trx) call?');
    expect(databaseUnavailableReason(err)).toBe('the database did not answer in time (no pooled connection came free)');
  }, 20_000);

  it('when connections are refused then it says so; an error of the statement\'s own is no such reason, and is described in the server\'s words', async () => {
    proxy = await startTcpProxy(hostAndPort(inject('databaseUrl')));
    proxy.cut();
    db = createDb({ connectionString: proxy.urlFor(inject('databaseUrl')), poolMax: 1, logger });
    const refused = await failureOf(db.raw('select 1'));
    expect(databaseUnavailableReason(refused)).toMatch(/^cannot reach the database \(|^the database closed the connection/);
    await db.destroy();
    db = createDb({ connectionString: inject('databaseUrl'), poolMax: 1, logger });
    const own = await failureOf(db.raw('select * from no_such_table'));
    expect(databaseUnavailableReason(own)).toBeUndefined();
    expect(describeDatabaseFailure(own)).toBe('relation "no_such_table" does not exist');
  }, 20_000);
});
