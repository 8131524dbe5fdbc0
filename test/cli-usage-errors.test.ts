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
});
