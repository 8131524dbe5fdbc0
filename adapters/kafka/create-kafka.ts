import { Kafka, logLevel, type LogEntry } from 'kafkajs';
import type { Logger } from '../../core/logging/index.js';
import { isGroupMembershipCrash } from './group-membership-errors.js';
import { stopIdleRequestQueueLoop } from './request-queue-idle-fix.js';

export interface KafkaClientOptions {
  brokers: string[];
  clientId: string;
  logger: Logger;
}

/**
 * A kafkajs client that logs through our logger (kafkajs INFO lines are routine chatter:
 * they go to debug). Connection retries are short: the callers decide how long to wait.
 */
export function createKafka(options: KafkaClientOptions): Kafka {
  stopIdleRequestQueueLoop();
  const log = options.logger.child({ component: 'kafkajs' });
  return new Kafka({
    clientId: options.clientId,
    brokers: options.brokers,
    connectionTimeout: 3_000,
    requestTimeout: 10_000,
    logLevel: logLevel.INFO,
    logCreator: () => ({ level, log: entry }: LogEntry) => {
      const { message, ...fields } = entry;
      const routine = level === logLevel.ERROR ? routineError(message, fields) : level === logLevel.WARN ? routineWarning(message) : undefined;
      if (routine === 'warn') {
        // A retry: what the caller does when they run out is its own error line. The same retry
        // line is said once per 10 s (with how many were held back): a broker that is down is
        // retried several times a second by every client.
        delete fields.stack;
        log.warnRepeating('kafkajs retry', message, fields);
      } else if (routine === 'info') log.info(message, fields);
      else if (routine === 'debug') log.debug(message, fields);
      else if (level === logLevel.ERROR) log.error(message, fields);
      else if (level === logLevel.WARN) log.warn(message, fields);
      else log.debug(message, fields);
    },
  });
}

// Responses kafkajs logs at ERROR although they are ordinary and it retries them. Every start
// meets one: a topic another process (or our previous run) created, a group coordinator that
// is still loading or not elected yet after a broker start. A real failure still surfaces:
// createTopics throws any error but "already exists" (kafkajs admin) and ensureTopics's caller
// reports it; a coordinator that never comes crashes the consumer ("Crash: ...", an error).
const routineResponseErrors = new Set([
  'Topic creation errors',
  "The coordinator is loading and hence can't process requests for this group",
  'The group coordinator is not available',
  // A member's heartbeat while the group rebalances (a worker started or stopped): it rejoins.
  'The group is rebalancing, so a rejoin is needed',
]);

/**
 * kafkajs WARN lines that are routine: a consumer re-joining its group as members come and go
 * (info: worth seeing, not a problem), and the warning every producer of ours gets, whose
 * retries are limited on purpose, with a new producer (new id) after any failed send
 * (kafka-usage-sink.ts) (debug).
 */
function routineWarning(message: string): 'info' | 'debug' | undefined {
  if (message === 'The group is rebalancing, re-joining') return 'info';
  if (message.startsWith('Limiting retries for the idempotent producer')) return 'debug';
  return undefined;
}

// A produce refused as too large (kafkajs says it twice: the response, then the failed send).
// Whoever sent it handles it and says so: the usage consumer sends a truncated stand-in for a
// dead letter (and if even that is refused, its crash is the error line); the usage sink
// refuses the calls whose events those were.
const TOO_LARGE = 'The request included a message larger than the max message size the server will accept';

/**
 * How to log a kafkajs ERROR line that is routine: 'info' for the start-up races above, a
 * crash the consumer rejoins its group from, and a message refused as too large, 'warn' for a connection attempt kafkajs retries (its stack says
 * nothing); undefined for a real error.
 */
function routineError(message: string, fields: Record<string, unknown>): 'info' | 'warn' | undefined {
  if (message.startsWith('Response ') && typeof fields.error === 'string' && routineResponseErrors.has(fields.error)) return 'info';
  // A consumer that must join its group again (a broker restarting, a member dropped): the usage
  // consumer does so in the process and says so in a warn line of its own (kafka-usage-consumer.ts).
  if (isGroupMembershipCrash(message)) return 'info';
  if (message === TOO_LARGE || (message.startsWith('Response Produce') && fields.error === TOO_LARGE)) return 'info';
  if (
    message.startsWith('Connection error: ') ||
    message === 'Connection timeout' ||
    message.startsWith('Failed to connect to seed broker, trying another broker from the list: ') ||
    message.startsWith('Failed to send messages: ')
  ) {
    return 'warn';
  }
  return undefined;
}

/** Creates the topics that do not exist yet (several partitions: events are keyed by organization). */
export async function ensureTopics(kafka: Kafka, topics: { topic: string; numPartitions: number }[]): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((t) => !existing.has(t.topic));
    if (missing.length > 0) {
      // false when another process created them between our list and create: fine.
      await admin.createTopics({ topics: missing.map((t) => ({ ...t, replicationFactor: -1 })), waitForLeaders: true });
    }
  } finally {
    await admin.disconnect();
  }
}
