import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { startAlertRunner } from '../core/alerts/index.js';
import { createDb, migrateLatest } from '../core/db/index.js';
import { createLogger } from '../core/logging/index.js';
import { createScratchDatabase } from './support/database.js';
import { hostAndPort } from './support/tcp-proxy.js';

// The dashboard's alert runner while PostgreSQL is down: it used to log an error with a full
// stack on every pass (every 5 s). Now the first failure with its message, then at most one
// "still failing since …" line per period, and one line when a pass succeeds again.

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the alert runner while its database is down', () => {
  it('when passes fail for a while and then succeed then one error, a "still failing" line per period, no stack, and one recovery line', async () => {
    // A port nothing listens on until the relay below starts: the database "down", then back.
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as net.AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    // A database of its own: once back, the runner makes real passes, which on the run's shared
    // database would deliver (and log) other test files' alerts.
    const scratch = await createScratchDatabase('alert_runner_log');
    cleanups.push(() => scratch.drop());
    const migrator = createDb({ connectionString: scratch.url, poolMax: 1 });
    await migrateLatest(migrator);
    await migrator.destroy();
    const target = hostAndPort(scratch.url);
    const url = new URL(scratch.url);
    url.hostname = '127.0.0.1';
    url.port = String(port);

    const lines: Record<string, unknown>[] = [];
    const db = createDb({ connectionString: url.toString(), poolMax: 2 });
    cleanups.push(() => db.destroy());
    const runner = startAlertRunner({ db, logger: createLogger({ level: 'info', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) }), intervalMs: 20, stillFailingEveryMs: 600 });
    cleanups.push(() => runner.stop());

    await sleep(1_000);
    const errors = lines.filter((l) => l.level === 'error');
    expect(errors[0]).toMatchObject({ msg: 'alert pass failed; the next pass retries', error: expect.any(String) });
    expect(errors.slice(1).map((l) => l.msg)).toEqual([expect.stringMatching(/^alert passes still failing since \d{4}-/)]);
    expect(errors[1]!.failures).toBeGreaterThan(5);
    expect(JSON.stringify(errors)).not.toContain('stack');

    const relay = net.createServer((client) => client.pipe(net.connect(target.port, target.host).on('error', () => client.destroy())).pipe(client).on('error', () => {}));
    await new Promise<void>((resolve) => relay.listen(port, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => relay.close(resolve)));
    for (let i = 0; i < 100 && !lines.some((l) => l.level === 'info'); i++) await sleep(50);
    await sleep(200);
    const after = lines.slice(lines.indexOf(errors.at(-1)!) + 1);
    expect(after.filter((l) => l.level !== 'info' || !/^alert passes succeed again/.test(l.msg as string))).toEqual([]);
    expect(after).toHaveLength(1);
    // The pool's connections go before the relay, whose close waits for them.
    await runner.stop();
    await db.destroy();
  });
});
