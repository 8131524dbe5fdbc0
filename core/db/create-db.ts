import knexFactory, { type Knex } from 'knex';
import pg from 'pg';

export type Db = Knex;

// Per-pool type parsers rather than pg's global ones, so no module mutates shared state:
// int8 (bigint: usage, money, ids) becomes a JS number — our values stay far below 2^53 —
// and `date` stays the ISO string we return to callers instead of a local-time Date.
const INT8 = 20;
const DATE = 1082;
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8) return (v: string) => Number(v);
    if (oid === DATE) return (v: string) => v;
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

export interface DbOptions {
  connectionString: string;
  poolMax?: number;
  applicationName?: string;
}

export function createDb(options: DbOptions): Db {
  return knexFactory({
    client: 'pg',
    connection: { connectionString: options.connectionString, types, application_name: options.applicationName ?? 'italian-company-data' } as Knex.PgConnectionConfig,
    pool: { min: 0, max: options.poolMax ?? 10 },
    // Fail fast when Postgres is down instead of queueing requests for knex's default 60 s.
    acquireConnectionTimeout: 5_000,
  });
}

/** A plain pg client for LISTEN, which needs one long-lived connection outside the pool. */
export function createListenClient(connectionString: string): pg.Client {
  return new pg.Client({ connectionString, types });
}
