import type { Command, Option } from 'commander';

/**
 * An unknown option is said before a missing required one: commander checks the required ones
 * first, so `org create --nam X` answered "required option '--name <name>' not specified", about
 * an option that was typed, without naming the typo (nor commander's "Did you mean --name?").
 * Here the required options are checked in a preAction hook instead, which commander runs after
 * its check for unknown options, with commander's own wording. Set once all commands are
 * registered, on the program (its hook runs for every subcommand).
 */
export function unknownOptionsFirst(program: Command): void {
  const required = new Map<Command, Option[]>();
  const collect = (command: Command) => {
    const mandatory = command.options.filter((o) => o.mandatory);
    for (const option of mandatory) option.mandatory = false;
    if (mandatory.length > 0) required.set(command, mandatory);
    for (const sub of command.commands) collect(sub);
  };
  collect(program);
  program.hook('preAction', (_program, action) => {
    for (let command: Command | null = action; command; command = command.parent) {
      for (const option of required.get(command) ?? []) {
        if (command.getOptionValue(option.attributeName()) === undefined) {
          command.error(`error: required option '${option.flags}' not specified`, { code: 'commander.missingMandatoryOptionValue' });
        }
      }
    }
  });
}
