import pg from 'pg';

// Each run, and each scratch database a test asks for, gets a database of its own on the
// server, so runs never collide with each other or with developers' data.

/** The URL of `database` on the same server (and with the same credentials) as `serverUrl`. */
export function databaseUrl(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

export function uniqueDatabaseName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${process.pid}_${Math.random().toString(36).slice(2, 6)}`;
}

/** Creates `database` through a maintenance connection to any database of the server. */
export async function createDatabase(serverUrl: string, database: string): Promise<string> {
  await withClient(serverUrl, (c) => c.query(`CREATE DATABASE ${quote(database)}`));
  return databaseUrl(serverUrl, database);
}

/** Drops `database`, ending any connection a test left open (PostgreSQL 13+). */
export async function dropDatabase(serverUrl: string, database: string): Promise<void> {
  await withClient(serverUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${quote(database)} WITH (FORCE)`));
}

/** One short-lived client for `use`, ended however `use` ends. */
export async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

function quote(identifier: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(identifier)) throw new Error(`unexpected database name ${identifier}`);
  return `"${identifier}"`;
}
