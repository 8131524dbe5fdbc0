import { Partitioners, type Admin, type Consumer, type ConsumerRunConfig, type Kafka, type KafkaMessage, type Producer } from 'kafkajs';
import type { Knex } from 'knex';
import { describeDatabaseFailure } from '../../core/db/index.js';
import { causeChain } from '../../core/errors/index.js';
import type { Logger } from '../../core/logging/index.js';
import {
  applyOneByOne,
  createBatchesInFlight,
  describeError,
  isCodeFault,
  isDataError,
  rootCause,
  UsageConsumerFailure,
  type ApplyUsageBatch,
  type DeadLetter,
  type UsageBacklog,
  type UsageBusConsumer,
  type UsageConsumerState,
} from '../../core/usage/index.js';
import { ensureTopics } from './create-kafka.js';
import { forwardDeadLetters } from './forward-dead-letters.js';
import { isGroupMembershipError } from './group-membership-errors.js';
import { heartbeatWhile } from './heartbeat-while.js';
import { kafkaUnreachableError } from './kafka-unreachable.js';

// A worker killed with -9 hands its partitions over within SESSION_TIMEOUT_MS (see start()).
const SESSION_TIMEOUT_MS = 10_000;
const HEARTBEAT_INTERVAL_MS = 2_000;
// Joining again after a lost coordinator: soon (a broker restart takes seconds), then less often.
const REJOIN_FIRST_MS = 1_000;
const REJOIN_MAX_MS = 30_000;

export interface KafkaUsageConsumerOptions {
  kafka: Kafka;
  db: Knex;
  topic: string;
  deadLetterTopic: string;
  groupId: string;
  /** Partitions of the topic when we have to create it. */
  partitions: number;
  logger: Logger;
  /** Most messages applied in one transaction. */
  maxBatch?: number;
  /** Partitions applied side by side in this process (each in its own transaction). */
  partitionsConsumedConcurrently?: number;
}

/**
 * The Kafka usage bus, consuming side: one consumer group shared by every worker replica.
 * kafkajs hands us a partition's fetched messages; each chunk of them is applied in one
 * Postgres transaction, and only after it commits do we (1) forward its dead letters to the
 * dead-letter topic and (2) commit the offset past it. A crash before (2) redelivers the chunk,
 * which the ledger turns into a no-op; a poison message is dead-lettered and passed over, so
 * it never blocks its partition. A chunk that fails on one message's own data (a time Postgres
 * cannot store, say) is applied again one message at a time, as the Postgres bus does, and only
 * that message is dead-lettered: kafkajs would otherwise fetch the same chunk for ever. A dead
 * letter larger than the dead-letter topic takes goes there as a truncated stand-in
 * (forward-dead-letters.ts), for the same reason.
 *
 * kafkajs restarts its consumer after a crash only when the crash's cause may pass (a broker
 * away, retries run out). One that may not (a TypeError in our code, an error Kafka marks not
 * retriable, such as a dead-letter topic too small for even an empty stand-in) makes it
 * disconnect and stay down (consumer/index.js, onCrash): that ends in `failed`. Except a lost
 * coordinator or membership (group-membership-errors.ts), which kafkajs also counts not
 * retriable although joining again is the cure: a broker restart meets one, and so does a
 * member dropped from its group. We run the consumer again ourselves, with backoff.
 */
export function createKafkaUsageConsumer(options: KafkaUsageConsumerOptions): UsageBusConsumer {
  const { kafka, db, logger, topic } = options;
  const maxBatch = options.maxBatch ?? 2_000;
  let consumer: Consumer | undefined;
  let deadLetters: Producer | undefined;
  let admin: Promise<Admin> | undefined;
  let lag: Promise<UsageBacklog> | undefined;
  let state: UsageConsumerState = 'starting';
  let closed = false;
  // Partitions whose last chunk failed to apply: while any does, the consumer is `retrying`.
  const failingPartitions = new Set<number>();
  let fail!: (failure: UsageConsumerFailure) => void;
  const failed = new Promise<UsageConsumerFailure>((resolve) => (fail = resolve));
  const inFlight = createBatchesInFlight();
  // Our own restarts after a lost coordinator or membership: pending, and how many in a row.
  let rejoinTimer: NodeJS.Timeout | undefined;
  let rejoins = 0;
  // What consuming waits on, while it cannot: said once in the worker's own words when it begins
  // (kafkajs's lines name neither: its "Crash: … ECONNREFUSED" reads as Kafka's failure when it
  // is the database's), again once in a while if it lasts, and once when consuming resumes.
  let outage: 'database' | 'kafka' | undefined;
  // Errors of the database work inside eachBatch: kafkajs crashes on them, wrapped, later.
  const databaseFailures = new WeakSet<object>();
  const outageBegins = (dependency: 'database' | 'kafka', err: unknown) => {
    outage = dependency;
    if (dependency === 'database') {
      logger.warnRepeating('usage consumer outage', 'the billing worker cannot reach the database: usage events stay on the Kafka topic, nothing is billed meanwhile, and it retries until the database answers', {
        dependency,
        cause: describeDatabaseFailure(err),
      });
    } else {
      logger.warnRepeating('usage consumer outage', 'the billing worker cannot reach Kafka: usage events stay on the topic, nothing is billed meanwhile, and it retries until Kafka answers', {
        dependency,
        cause: describeError(rootCause(err)),
      });
    }
  };
  const outageEnds = () => {
    if (!outage) return;
    logger.info(outage === 'database' ? 'the billing worker reaches the database again: consuming usage events' : 'the billing worker reaches Kafka again: consuming usage events', { dependency: outage });
    outage = undefined;
  };
  const isDatabaseFailure = (err: unknown) => causeChain(err).some((e) => typeof e === 'object' && e !== null && databaseFailures.has(e));

  // One admin client, connected at the first probe and kept: a probe is then two requests.
  // It asks once (no retries): the next probe asks again.
  const connectedAdmin = (): Promise<Admin> => {
    if (!admin) {
      const client = kafka.admin({ retry: { retries: 0 } });
      admin = client.connect().then(
        () => client,
        async (err: unknown) => {
          admin = undefined;
          await client.disconnect().catch(() => {});
          throw err;
        },
      );
    }
    return admin;
  };

  // The group's lag (eventsBehind); the two reads go side by side.
  const readLag = async (): Promise<UsageBacklog> => {
    const client = await connectedAdmin();
    const [ends, committed] = await Promise.all([client.fetchTopicOffsets(topic), client.fetchOffsets({ groupId: options.groupId, topics: [topic] })]);
    return { events: eventsBehind(ends, committed.find((t) => t.topic === topic)?.partitions ?? []) };
  };

  const applyChunk = async (apply: ApplyUsageBatch, partition: number, messages: KafkaMessage[]) => {
    const busMessages = messages.map((m) => ({ value: m.value, ref: `${topic}/${partition}@${m.offset}` }));
    let dead: DeadLetter[];
    // A fault in our code is not the database's: it ends the consumer (CRASH below).
    const databaseWork = <T>(work: () => Promise<T>) =>
      work().catch((err: unknown) => {
        if (typeof err === 'object' && err !== null && !isCodeFault(err)) databaseFailures.add(err);
        throw err;
      });
    try {
      dead = (await databaseWork(() => inFlight.run(() => db.transaction((trx) => apply(trx, busMessages))))).deadLetters;
    } catch (err) {
      if (!isDataError(err)) throw err;
      logger.warn('usage chunk failed on its own data; applying it one message at a time', { err, partition, messages: messages.length });
      dead = await databaseWork(() => inFlight.run(() => db.transaction((trx) => applyOneByOne(trx, apply, busMessages, 'kafka', logger))));
    }
    if (dead.length > 0) await forwardDeadLetters(dead, { producer: deadLetters!, topic: options.deadLetterTopic, logger });
  };

  let runConfig: ConsumerRunConfig | undefined;
  // What kafkajs does when it restarts a consumer itself: run it again (its group and cluster
  // connections are made anew; the subscription stays).
  const rejoin = async (c: Consumer) => {
    rejoinTimer = undefined;
    if (closed || state === 'failed') return;
    try {
      await c.run(runConfig);
    } catch (err) {
      // run() crashes through CRASH above rather than throwing; this is its disconnect failing.
      logger.warn('could not run the kafka consumer again; trying later', { err });
      if (!closed) rejoinTimer = setTimeout(() => void rejoin(c), REJOIN_MAX_MS);
      return;
    }
    // A stop() that came while it joined found no runner to stop yet.
    if (closed) await c.disconnect().catch(() => {});
  };

  return {
    bus: 'kafka',
    async start(apply) {
      // kafkajs retries connecting for some seconds first; then the start-up's one line says
      // which broker did not answer and which variable names it.
      let c: Consumer;
      try {
        await ensureTopics(kafka, [
          { topic, numPartitions: options.partitions },
          { topic: options.deadLetterTopic, numPartitions: 1 },
        ]);
        deadLetters = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
        await deadLetters.connect();
        // A short session: a worker killed with -9 hands its partitions over in about ten seconds.
        // A live one stays in its group however long a batch waits on the database, since it
        // heartbeats meanwhile (heartbeatWhile), up to BILLING_BATCH_STALL_MS, when the worker
        // ends. The price: a rebalance (a worker joining or leaving) waits for such a batch
        // before it completes, up to kafkajs's rebalance timeout (60 s); past that this member
        // is dropped, and rejoins once its batch ends (the CRASH listener below).
        // maxWaitTime bounds how long stop() waits for an idle fetch to return.
        c = kafka.consumer({ groupId: options.groupId, sessionTimeout: SESSION_TIMEOUT_MS, heartbeatInterval: HEARTBEAT_INTERVAL_MS, maxWaitTimeInMs: 1_000 });
        consumer = c;
        // A (re)join is the consumer at work again, after a start or a crash kafkajs restarts from.
        // A partition that moved to another member is no longer this one's to fail on; one that
        // stays keeps its failure until a chunk of it applies (a restart is not a recovery).
        c.on(c.events.GROUP_JOIN, ({ payload }) => {
          rejoins = 0;
          if (state === 'starting' || state === 'retrying') state = 'consuming';
          // Back in its group is Kafka answering again; the database's outage ends with a batch.
          if (outage === 'kafka') outageEnds();
          const assigned = new Set(payload.memberAssignment[topic] ?? []);
          for (const partition of failingPartitions) if (!assigned.has(partition)) failingPartitions.delete(partition);
        });
        c.on(c.events.CRASH, ({ payload }) => {
          if (state === 'stopped' || state === 'failed') return;
          if (payload.restart) {
            state = 'retrying';
            if (isDatabaseFailure(payload.error)) outageBegins('database', payload.error);
            else outageBegins('kafka', payload.error);
            return;
          }
          if (isGroupMembershipError(payload.error)) {
            // kafkajs has disconnected it (onCrash) and will not run it again: we do. Nothing
            // is lost: what was not committed is fetched again, and the ledger takes it once.
            state = 'retrying';
            const delayMs = Math.min(REJOIN_FIRST_MS * 2 ** rejoins, REJOIN_MAX_MS);
            rejoins += 1;
            logger.warn('kafka consumer lost its group coordinator or membership; joining the group again', { cause: describeError(rootCause(payload.error)), inMs: delayMs });
            rejoinTimer = setTimeout(() => void rejoin(c), delayMs);
            return;
          }
          state = 'failed';
          const cause = rootCause(payload.error);
          fail(new UsageConsumerFailure(`the Kafka consumer crashed on an error kafkajs does not retry, and kafkajs will not restart it (${describeError(cause)})`, { cause }));
        });
        await c.connect();
        // A new group starts at the beginning: events produced before the first worker ran are
        // still owed.
        await c.subscribe({ topic, fromBeginning: true });
      } catch (err) {
        throw kafkaUnreachableError(err) ?? err;
      }
      runConfig = {
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: options.partitionsConsumedConcurrently ?? 2,
        eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
          for (let i = 0; i < batch.messages.length; i += maxBatch) {
            // On rebalance or stop, leave the rest: its new owner (or our next start) gets it.
            if (!isRunning() || isStale()) return;
            const chunk = batch.messages.slice(i, i + maxBatch);
            try {
              await heartbeatWhile(heartbeat, HEARTBEAT_INTERVAL_MS, () => applyChunk(apply, batch.partition, chunk));
            } catch (err) {
              // kafkajs retries it, then crashes and restarts (or, for an error it does not
              // retry, stops: see CRASH above); meanwhile this worker bills nothing.
              failingPartitions.add(batch.partition);
              if (isDatabaseFailure(err)) outageBegins('database', err);
              throw err;
            }
            failingPartitions.delete(batch.partition);
            const last = chunk[chunk.length - 1]!.offset;
            resolveOffset(last);
            await c.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: (BigInt(last) + 1n).toString() }]);
            outageEnds();
            await heartbeat();
          }
        },
      };
      await c.run(runConfig);
      logger.info('kafka usage consumer running', { topic, groupId: options.groupId });
    },
    async stop() {
      if (state !== 'failed') state = 'stopped';
      closed = true;
      clearTimeout(rejoinTimer);
      // kafkajs waits for the batch in flight to finish (its transaction and offset commit).
      await consumer?.disconnect();
      await deadLetters?.disconnect();
      const probe = admin;
      consumer = undefined;
      deadLetters = undefined;
      admin = undefined;
      await probe?.then((client) => client.disconnect(), () => {});
    },
    failed,
    state: () => (state === 'consuming' && failingPartitions.size > 0 ? 'retrying' : state),
    backlog() {
      if (closed) return Promise.reject(new Error('the usage consumer is stopped'));
      // One read at a time, however many probes ask while it runs (a broker that does not answer).
      lag ??= readLag().finally(() => {
        lag = undefined;
      });
      return lag;
    },
    batchInFlight: () => inFlight.oldest(),
  };
}

/**
 * The group's lag: on each partition, its end less the offset the group committed there (none
 * yet: the group starts at the beginning, so all the partition still holds). Each partition's
 * is at least 0: the ends and the commits are read side by side, so a commit read after an end
 * that was read earlier can be past it (a worker just restarted catching up), and the sum was
 * seen as -20 on /healthz.
 */
export function eventsBehind(ends: readonly { partition: number; high: string; low: string }[], committed: readonly { partition: number; offset: string }[]): number {
  const done = new Map(committed.map((p) => [p.partition, BigInt(p.offset)]));
  let events = 0n;
  for (const end of ends) {
    const from = done.get(end.partition) ?? -1n;
    const behind = BigInt(end.high) - (from >= 0n ? from : BigInt(end.low));
    if (behind > 0n) events += behind;
  }
  return Number(events);
}
