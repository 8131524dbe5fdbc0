import type { Command } from 'commander';

/** "cli billing top-up": how an operator types the command. */
export const commandPath = (command: Command): string => {
  const names: string[] = [];
  for (let c: Command | null = command; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
};

/**
 * A usage error (an unknown option, a missing or invalid value) is one line, as a command's own
 * errors are, then where to read more: the whole help after it buried the line that says what
 * was wrong. Set on every command once all are registered: commander copies the setting to a
 * subcommand only when that is created.
 */
export function hintHelpOnUsageErrors(command: Command): void {
  command.showHelpAfterError(`(see: ${commandPath(command)} --help)`);
  for (const sub of command.commands) hintHelpOnUsageErrors(sub);
}
