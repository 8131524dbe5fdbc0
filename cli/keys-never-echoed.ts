import type { Command } from 'commander';
import { withoutApiKeys } from '../core/auth/index.js';

/**
 * What the CLI writes as an error never holds an API key: an operator who pastes a key where an
 * id or a command goes (`org show sk_live_…`) is told so with the key redacted, since terminals,
 * shell histories' neighbours and CI logs keep errors. Commander's own usage errors ("unknown
 * command 'sk_live_…'") included: set on every command once all are registered, since commander
 * copies output settings to a subcommand only when that is created.
 */
export function keysNeverEchoed(command: Command): void {
  command.configureOutput({ outputError: (text, write) => write(withoutApiKeys(text)) });
  for (const sub of command.commands) keysNeverEchoed(sub);
}

/** An error line of the CLI's own, redacted the same way. */
export const writeError = (line: string): void => void process.stderr.write(withoutApiKeys(line));
