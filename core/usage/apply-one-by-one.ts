import type { Knex } from 'knex';
import { databaseErrorParts } from '../db/database-error.js';
import { escapeNul } from '../db/storable-text.js';
import type { Logger } from '../logging/index.js';
import { messageText } from './parse-usage-message.js';
import type { ApplyUsageBatch, DeadLetter, UsageBusConsumer, UsageBusMessage } from './usage-bus.js';

/** SQLSTATE classes of a message's own fault (bad data, a constraint): retrying will not help. */
export const isDataError = (err: unknown): boolean => /^(22|23)/.test(String((err as { code?: unknown } | null)?.code ?? ''));

/** A database error as a dead letter's reason: `SQLSTATE 22008: date/time field value out of range: …`. */
export const databaseReason = (err: unknown): string => {
  const { sqlstate, message } = databaseErrorParts(err);
  return `SQLSTATE ${sqlstate}: ${message}`;
};

/** A dead letter's row. Postgres text cannot hold NUL, which a message off the bus may carry:
 * without the escape the insert fails and the message would block the bus it was set aside from. */
const deadLetterRow = (bus: UsageBusConsumer['bus'], dead: DeadLetter) => ({
  bus,
  payload: escapeNul(dead.value),
  reason: escapeNul(`${dead.reason} (${dead.ref})`),
  source: escapeNul(dead.ref),
  replay_after: dead.replayAfter ?? null,
});

/**
 * Keeps dead letters, each message from each source once (migration 030): a message delivered
 * again (a Kafka chunk whose offset was not committed before its worker stopped) keeps the row
 * it had.
 */
export async function keepDeadLetters(trx: Knex.Transaction, bus: UsageBusConsumer['bus'], dead: DeadLetter[]): Promise<void> {
  if (dead.length === 0) return;
  await trx('usage_dead_letters').insert(dead.map((d) => deadLetterRow(bus, d))).onConflict(['source', 'payload_md5']).ignore();
}

/**
 * A batch whose application fails on its own data would come back for ever and hold up every
 * event behind it. This applies its messages one at a time in `trx`, each in a savepoint: those
 * that still fail are dead-lettered here ("apply failed: SQLSTATE …"), the rest are charged as
 * usual. Returns every dead letter of the batch, parsing's included, for the bus to forward.
 * A failure that is not the message's own (the database itself) is thrown: the batch stays on
 * the bus and comes back.
 */
export async function applyOneByOne(trx: Knex.Transaction, apply: ApplyUsageBatch, messages: UsageBusMessage[], bus: UsageBusConsumer['bus'], logger: Logger): Promise<DeadLetter[]> {
  const deadLetters: DeadLetter[] = [];
  for (const message of messages) {
    try {
      const outcome = await trx.transaction((savepoint) => apply(savepoint, [message]));
      deadLetters.push(...outcome.deadLetters);
    } catch (err) {
      if (!isDataError(err)) throw err;
      const dead = { ref: message.ref, value: messageText(message.value), reason: `apply failed: ${databaseReason(err)}` };
      await keepDeadLetters(trx, bus, [dead]);
      logger.warn('usage message dead-lettered', { bus, ref: dead.ref, reason: dead.reason });
      deadLetters.push(dead);
    }
  }
  return deadLetters;
}
