import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../test/services/free-port.js';
import { runCliIn } from '../test/support/run-cli.js';

// A command run outside the checkout, without DATABASE_URL, as an operator's shell in the wrong
// folder runs it: before, it made, migrated and started an empty embedded database there
// (./.data/postgres) and answered from it ("no organizations yet", exit 0), and `org create`
// wrote into it. Now it refuses, says where it looked, and makes nothing.
let cwd: string;

beforeAll(async () => {
  cwd = await mkdtemp(path.join(os.tmpdir(), 'cli-elsewhere-'));
});
afterAll(async () => {
  if (cwd) await rm(cwd, { recursive: true, force: true });
});

describe('cli run from a folder with no database', () => {
  it('when DATA_DIR has no database and DATABASE_URL is unset then org create and migrate up refuse, naming the folder, and create nothing', async () => {
    // A free port: a regression would start its embedded server there, not on a real one's 54329.
    const env = { DATABASE_URL: undefined, DATA_DIR: undefined, LOG_LEVEL: undefined, EMBEDDED_PG_PORT: String(await freePort()) };
    const runs = await Promise.all([runCliIn(cwd, env, 'org', 'create', '--name', 'Nowhere SRL'), runCliIn(cwd, env, 'migrate', 'up')]);
    for (const run of runs) {
      expect(run).toEqual({
        code: 1,
        stdout: '',
        stderr: `error: no database under ${path.join(cwd, '.data', 'postgres')}: run this where npm start runs (its first run creates the database), or set DATA_DIR or DATABASE_URL\n`,
      });
    }
    expect(await readdir(cwd)).toEqual([]);
  }, 120_000);
});
