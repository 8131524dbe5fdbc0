import { describe, expect, inject, it } from 'vitest';
import { runCli } from './support/run-cli.js';

const cli = (...args: string[]) => runCli(inject('databaseUrl'), ...args);

describe('cli usage errors', () => {
  it('when a command is used wrongly then stderr holds the one error line and where to read more, not the whole help', async () => {
    const [invalid, missing, unknownOption, unknownCommand] = await Promise.all([
      cli('billing', 'top-up', '--org', 'x', '--credits', 'abc', '--reason', 'r'),
      cli('key', 'create', '--org', 'x'),
      cli('org', 'list', '--colour'),
      cli('bogus'),
    ]);
    expect(invalid).toMatchObject({ code: 1, stdout: '', stderr: "error: option '--credits <n>' argument 'abc' is invalid. must be a positive whole number.\n(see: cli billing top-up --help)\n" });
    expect(missing).toMatchObject({ code: 1, stdout: '', stderr: "error: required option '--name <name>' not specified\n(see: cli key create --help)\n" });
    expect(unknownOption).toMatchObject({ code: 1, stdout: '', stderr: "error: unknown option '--colour'\n(see: cli org list --help)\n" });
    expect(unknownCommand).toMatchObject({ code: 1, stdout: '', stderr: "error: unknown command 'bogus'\n(see: cli --help)\n" });
  });

  it('when an API key is pasted where an id, a value or a command goes then the error redacts it', async () => {
    const key = `sk_live_${'K1'.repeat(16)}`;
    // A whole key, and one cut short (most of a real one).
    const runs = await Promise.all([cli('org', 'show', key), cli('key', 'list', `--org=${key}`), cli(key), cli('org', 'list', `--${key}`), cli('org', 'show', key.slice(0, -1))]);
    expect(runs.map((run) => run.stderr)).toEqual([
      'error (not_found): No organization with id or name "sk_live_[redacted]".\n',
      'error (not_found): No organization with id or name "sk_live_[redacted]".\n',
      "error: unknown command 'sk_live_[redacted]'\n(see: cli --help)\n",
      "error: unknown option '--sk_live_[redacted]'\n(see: cli org list --help)\n",
      'error (not_found): No organization with id or name "sk_live_[redacted]".\n',
    ]);
    for (const run of runs) expect(run).toMatchObject({ code: 1, stdout: '' });
  });
});
