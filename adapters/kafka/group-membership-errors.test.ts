import { KafkaJSConnectionError, KafkaJSGroupCoordinatorNotFound, KafkaJSNonRetriableError, KafkaJSProtocolError } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { isGroupMembershipError } from './group-membership-errors.js';

// kafkajs's own error classes, wrapped as its retrier wraps them (retry/index.js: a non-retriable
// error becomes KafkaJSNonRetriableError with the original as `cause`), and Kafka's protocol
// errors as kafkajs decodes them (protocol/error.js).
const protocolError = (type: string, message: string, retriable: boolean) => new KafkaJSProtocolError({ type, message, retriable, code: 0 } as unknown as string);
// Their constructors take more than kafkajs's types say.
const NonRetriable = KafkaJSNonRetriableError as unknown as new (e: Error, options: { cause: Error }) => Error;
const CoordinatorNotFound = KafkaJSGroupCoordinatorNotFound as unknown as new (message: string) => Error;
const wrapped = (e: Error) => new NonRetriable(e, { cause: e });

describe('isGroupMembershipError', () => {
  it('when kafkajs could not find the coordinator (a broker restarting) or the group dropped the member, then joining again is the cure, wrapped or not', () => {
    expect(isGroupMembershipError(new CoordinatorNotFound('Failed to find group coordinator'))).toBe(true);
    expect(isGroupMembershipError(wrapped(new CoordinatorNotFound('Failed to find group coordinator')))).toBe(true);
    expect(isGroupMembershipError(wrapped(protocolError('UNKNOWN_MEMBER_ID', 'The coordinator is not aware of this member', false)))).toBe(true);
    expect(isGroupMembershipError(wrapped(protocolError('REBALANCE_IN_PROGRESS', 'The group is rebalancing, so a rejoin is needed', false)))).toBe(true);
    expect(isGroupMembershipError(protocolError('NOT_COORDINATOR_FOR_GROUP', 'This is not the correct coordinator for this group', true))).toBe(true);
  });

  it('when the error is anything else (a message too large, a fault in the code, a connection error) then it is not', () => {
    expect(isGroupMembershipError(wrapped(protocolError('MESSAGE_TOO_LARGE', 'The request included a message larger than the max message size the server will accept', false)))).toBe(false);
    expect(isGroupMembershipError(wrapped(new TypeError('x is undefined')))).toBe(false);
    expect(isGroupMembershipError(new KafkaJSConnectionError('Connection error: connect ECONNREFUSED'))).toBe(false);
    expect(isGroupMembershipError(undefined)).toBe(false);
  });
});
