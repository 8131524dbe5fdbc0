import { causeChain } from '../../core/errors/index.js';

// Kafka's answers that say this member must find its coordinator or join its group again: a
// broker restarting, the coordinator moving, a member dropped while its batch waited on the
// database. Kafka marks UNKNOWN_MEMBER_ID and REBALANCE_IN_PROGRESS not retriable (they are not
// retried as they stand: the member must rejoin first), and kafkajs gives up on a coordinator it
// could not find with KafkaJSGroupCoordinatorNotFound, also not retriable; so a consumer that
// meets one outside the few places kafkajs rejoins by itself crashes with `restart: false`.
const rejoinTypes = new Set([
  'GROUP_COORDINATOR_NOT_AVAILABLE',
  'COORDINATOR_LOAD_IN_PROGRESS',
  'NOT_COORDINATOR_FOR_GROUP',
  'UNKNOWN_MEMBER_ID',
  'ILLEGAL_GENERATION',
  'REBALANCE_IN_PROGRESS',
]);

/** Whether `err` (or what it wraps) is one a consumer recovers from by joining its group again. */
export function isGroupMembershipError(err: unknown): boolean {
  return causeChain(err).some((e) => {
    const { name, type } = (e ?? {}) as { name?: unknown; type?: unknown };
    return name === 'KafkaJSGroupCoordinatorNotFound' || (typeof type === 'string' && rejoinTypes.has(type));
  });
}

// The same answers as kafkajs words them (protocol/error.js), and its own for a coordinator it
// could not find: all its "Crash: <name>: <message>" line keeps of the error, whose name may be
// the wrapper's (KafkaJSNonRetriableError).
const rejoinMessages = new Set([
  'The group coordinator is not available',
  "The coordinator is loading and hence can't process requests for this group",
  'This is not the correct coordinator for this group',
  'The coordinator is not aware of this member',
  'Specified group generation id is not valid',
  'The group is rebalancing, so a rejoin is needed',
  'Failed to find group coordinator',
]);

/**
 * Whether a kafkajs "Crash: …" log line is of an error the usage consumer recovers from by
 * joining its group again (and says so itself, at warn): not an error worth an error line.
 */
export function isGroupMembershipCrash(line: string): boolean {
  const crash = /^Crash: [A-Za-z]+: (.*)$/s.exec(line);
  return crash !== null && rejoinMessages.has(crash[1]!);
}
