import type { Command } from 'commander';

/**
 * An option given twice is refused, on every command: commander keeps the last value, so
 * `billing top-up --credits 5 --credits 500` added 500, and a second `--org` credited another
 * organization, without a word. A list option (`--org <org...>`) is left alone: given again, it
 * adds to its list rather than replacing it (commander emits its event once per value, so the
 * flags could not be counted here anyway). Set once all commands are registered.
 */
export function refuseRepeatedOptions(command: Command): void {
  const given = new Set<string>();
  for (const option of command.options.filter((o) => !o.variadic)) {
    // Emitted once per occurrence on the command line, after commander has parsed the value.
    command.on(`option:${option.name()}`, () => {
      if (given.has(option.name())) command.error(`error: option '${option.flags}' is given more than once: give it once`, { code: 'cli.repeatedOption' });
      given.add(option.name());
    });
  }
  for (const sub of command.commands) refuseRepeatedOptions(sub);
}
