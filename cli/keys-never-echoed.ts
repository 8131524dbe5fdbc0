import type { Command } from 'commander';

/**
 * What the CLI writes as an error never holds an API key: an operator who pastes a key where an
 * id or a command goes (`org show sk_live_…`) is told so with the key redacted, since terminals,
 * shell histories' neighbours and CI logs keep errors. Commander's own usage errors ("unknown
 * command 'sk_live_…'") included: set on every command once all are registered, since commander
 * copies output settings to a subcommand only when that is created.
 */
export function keysNeverEchoed(command: Command): void {
  command.configureOutput({ outputError: (text, write) => write(withoutKeys(text)) });
  for (const sub of command.commands) keysNeverEchoed(sub);
}

/** An error line of the CLI's own, redacted the same way. */
export const writeError = (line: string): void => void process.stderr.write(withoutKeys(line));

// Anything that starts as a key does, whatever its length: a key cut short or mistyped when
// pasted is most of a real one (`key revoke` never echoes such a thing either).
const KEY_LIKE = /sk_(live|test)_[0-9A-Za-z]*/g;
const withoutKeys = (text: string): string => (text.includes('sk_') ? text.replace(KEY_LIKE, 'sk_$1_[redacted]') : text);
