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
