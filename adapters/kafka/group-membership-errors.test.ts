import { KafkaJSConnectionError, KafkaJSGroupCoordinatorNotFound, KafkaJSNonRetriableError, KafkaJSProtocolError } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../core/logging/index.js';
import { createKafka } from './create-kafka.js';
import { isGroupMembershipCrash, isGroupMembershipError } from './group-membership-errors.js';

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

describe("kafkajs's Crash line", () => {
  // What kafkajs's consumer logs when it crashes (consumer/index.js onCrash), through our log creator.
  const crashLine = (e: Error) => `Crash: ${e.name}: ${e.message}`;
  const levelOf = (line: string) => {
    const lines: { level: string; msg: string }[] = [];
    const logger = createLogger({ level: 'debug', write: (l) => void lines.push(JSON.parse(l) as { level: string; msg: string }) });
    createKafka({ brokers: ['127.0.0.1:1'], clientId: 'crash-line', logger }).logger().error(line, { groupId: 'g', retryCount: 0 });
    return lines.map((l) => l.level);
  };

  it('when the consumer crashed on an error it rejoins its group from, then the line is info (the consumer says so at warn), wrapped or not', () => {
    for (const e of [
      new CoordinatorNotFound('Failed to find group coordinator'),
      wrapped(protocolError('UNKNOWN_MEMBER_ID', 'The coordinator is not aware of this member', false)),
      wrapped(protocolError('ILLEGAL_GENERATION', 'Specified group generation id is not valid', false)),
    ]) {
      expect(isGroupMembershipCrash(crashLine(e)), crashLine(e)).toBe(true);
      expect(levelOf(crashLine(e)), crashLine(e)).toEqual(['info']);
    }
  });

  it('when it crashed on anything else, then the line stays an error', () => {
    const e = wrapped(protocolError('MESSAGE_TOO_LARGE', 'The request included a message larger than the max message size the server will accept', false));
    expect(isGroupMembershipCrash(crashLine(new TypeError('x is undefined')))).toBe(false);
    expect(levelOf(crashLine(new TypeError('x is undefined')))).toEqual(['error']);
    expect(isGroupMembershipCrash('The coordinator is not aware of this member')).toBe(false);
    expect(isGroupMembershipCrash(crashLine(e))).toBe(false);
  });
});
