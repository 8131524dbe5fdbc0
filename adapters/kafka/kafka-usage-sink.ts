import { Partitioners, type Admin, type Kafka, type Message, type Producer } from 'kafkajs';
import { errorMessage } from '../../core/errors/index.js';
import type { Logger } from '../../core/logging/index.js';
import { createBatchPublisher, meteringUnavailable, settleRefusedCalls, USAGE_PUBLISH_DEADLINE_MS, type RecordRefusedCalls, type UsageEvent, type UsageSink } from '../../core/usage/index.js';
import { ensureTopics } from './create-kafka.js';
import { failedToReachKafka, refusedByEveryBroker, type BrokerAddress } from './kafka-unreachable.js';

/**
 * The longest a caller waits for Kafka to acknowledge its event: then its call is refused (503
 * entitlement_unavailable). The Postgres bus's deadline too: docs/billing.md promises ten
 * seconds, whatever kafkajs's own retries (send, reconnect, topic check) would add up to.
 */
export const PUBLISH_DEADLINE_MS = USAGE_PUBLISH_DEADLINE_MS;

/** While Kafka is unreachable: how often a reconnect is tried, and how often that is logged. */
const RECONNECT_EVERY_MS = 2_000;
const STILL_UNREACHABLE_EVERY_MS = 30_000;

// The idle check (see createKafkaUsageSink). Constants, not settings: they decide how soon an
// idle replica's /healthz says Kafka is gone (here: within about 2 × 3 s), nothing a deployment
// tunes. A check is a TCP connection to the brokers and one metadata request, made only when no
// batch was acknowledged since the previous tick, so a replica serving calls never makes one.
const IDLE_CHECK_EVERY_MS = 3_000;
// A metadata request is answered in milliseconds. Two checks in a row unanswered this long (a
// broker that takes connections and says nothing) is about as long as a paid call waits before
// it is refused (PUBLISH_DEADLINE_MS). Shorter than kafkajs's own request timeout (createKafka:
// 10 s), which some admin requests turn into a TypeError that would not count as unreachable.
const IDLE_CHECK_DEADLINE_MS = 5_000;
// One failed check is not enough: a broker restarting for a second, or, of several brokers, the
// one kafkajs happened to ask, is something a paid call would ride out (kafkajs retries a send
// for about ten seconds), and counting Kafka as unreachable refuses every call at once.
const IDLE_CHECK_FAILURES = 2;

export interface KafkaUsageSinkOptions {
  kafka: Kafka;
  topic: string;
  /** Partitions of the topic when we have to create it. */
  partitions: number;
  logger: Logger;
  /** Most events in one produce request. */
  maxBatch?: number;
  /** How long the first event of a batch waits for company when nothing is in flight. */
  lingerMs?: number;
  /** kafkajs retry of one send; the default rides out a broker restart (about ten seconds). */
  retry?: { initialRetryTime: number; retries: number; maxRetryTime: number };
  /** PUBLISH_DEADLINE_MS unless a test needs it shorter. */
  deadlineMs?: number;
  /**
   * Records calls refused while their events may still reach the topic, so those are not
   * charged, and refunds any already charged (core/billing's recordRefusedCalls); without it
   * they are only logged for refund.
   */
  recordRefused?: RecordRefusedCalls;
}

export interface KafkaUsageSink extends UsageSink {
  /** Connects and creates the topic now instead of on the first publish (start-up checks). */
  connect(): Promise<void>;
}

/** One caller's event on its way to Kafka. */
interface Pending {
  event: UsageEvent;
  /** Date.now() after which the caller is refused. */
  deadline: number;
  refused: boolean;
  /** Set while its batch is being sent: stops kafkajs from sending it again. */
  abandon?: () => void;
}

/**
 * The Kafka usage bus, producing side. kafkajs sends one request per send(), so concurrent
 * publish() calls are gathered into one send (core/usage batch-publisher). Each caller's
 * promise resolves only once Kafka acknowledged its batch with acks=-1 (every in-sync replica
 * has it), and rejects with meteringUnavailable() (503 entitlement_unavailable) otherwise, so
 * the API never sends a 2xx for an event that is not durable. The producer is idempotent
 * (the broker drops duplicates of its own retries); key = organization, so an organization's
 * events stay in order on one partition.
 *
 * After a failed send the producer is thrown away and a new one (new producer id) is made:
 * an idempotent producer's sequence numbers after an unknown outcome could make the broker
 * take the next batch for a duplicate of the failed one and drop it while acknowledging it.
 *
 * Every caller is answered within the deadline. A caller refused at its deadline must not be
 * charged, so its event must not reach Kafka afterwards: an event still queued is never sent,
 * and a batch whose send is still retrying inside kafkajs is emptied, so kafkajs's later
 * attempts send nothing. Only a request already on the wire at the deadline can still land (a
 * stalled broker stores it on resuming without kafkajs ever hearing of it): its events are
 * recorded as refused in the ledger at the deadline (`recordRefused`), so the worker charges
 * none of them, and any the ledger had already charged is refunded; when that record fails,
 * all are logged at error with their ids for refund.
 *
 * While Kafka is unreachable (a send, a reconnect or the idle check failed and none succeeded
 * since) calls are refused at once, and one reconnect at a time runs in the background, every 2 s
 * until one succeeds (and at once when a call comes).
 *
 * The idle check: a send is what finds out that Kafka has gone, so a replica that serves no
 * calls would go on counting it as reachable (/healthz 200) through an outage, and its first
 * calls would be the ones refused. While no batch is acknowledged, every 3 s a check asks Kafka
 * whether it still answers (a TCP connection to its brokers, then a metadata request); two
 * checks in a row that fail to reach it (refused, closed, no answer within 5 s) count Kafka as
 * unreachable, as a failed send does, said in one line. A send outweighs the checks: a check
 * is not made while a send is under way, and one that fails while a send was acknowledged is
 * dropped. A check that reaches Kafka never counts it as reachable again: only a reconnect
 * that succeeds does, as after a failed send. A check that fails for another reason (the
 * broker refused the request) changes nothing.
 */
export function createKafkaUsageSink(options: KafkaUsageSinkOptions): KafkaUsageSink {
  const { kafka, topic, logger } = options;
  const deadlineMs = options.deadlineMs ?? PUBLISH_DEADLINE_MS;
  let producer: Producer | undefined;
  let connecting: Promise<Producer> | undefined;
  let failing = false;
  let topicReady = false;
  let closed = false;
  // Sends given up at a deadline that kafkajs is still retrying (with nothing left to send).
  const abandoned = new Set<Promise<unknown>>();
  // While Kafka is unreachable, the next reconnect, due whether or not calls come.
  let retryTimer: NodeJS.Timeout | undefined;
  let lastStillUnreachable = 0;
  // Sends waiting for their acknowledgement, and batches acknowledged so far: the idle check's
  // evidence that Kafka answers (one increment per batch, nothing per call).
  let sendsUnderWay = 0;
  let batchesAcknowledged = 0;
  let batchesAcknowledgedAtLastTick = 0;
  // The idle check's admin client, connected with the producer and kept (a check is then one
  // request), the brokers Kafka last said it has (host and port as the producer reaches them),
  // and the check under way.
  let checker: { admin: Admin; connected: Promise<Admin> } | undefined;
  let brokers: BrokerAddress[] = [];
  let checking: Promise<void> | undefined;
  let failedChecks = 0;

  const connectOnce = (): Promise<Producer> =>
    (connecting ??= (async () => {
      if (!topicReady) {
        await ensureTopics(kafka, [{ topic, numPartitions: options.partitions }]);
        topicReady = true;
      }
      const p = kafka.producer({
        idempotent: true,
        maxInFlightRequests: 1,
        createPartitioner: Partitioners.DefaultPartitioner,
        // Long enough to ride out a broker restart or leader move; PUBLISH_DEADLINE_MS bounds
        // what a caller waits whatever these add up to.
        retry: options.retry ?? { initialRetryTime: 200, retries: 6, maxRetryTime: 3_000 },
      });
      try {
        await p.connect();
      } catch (err) {
        await p.disconnect().catch(() => {});
        throw err;
      }
      // close() ran meanwhile and waits for us: nothing may stay connected after it.
      if (closed) {
        await p.disconnect().catch(() => {});
        throw new Error('usage sink closed');
      }
      producer = p;
      failing = false;
      void prepareChecker();
      return p;
    })()
      .catch((err: unknown) => {
        failing = true;
        retrySoon();
        throw err;
      })
      .finally(() => {
        connecting = undefined;
      }));

  /** A reconnect in the background while Kafka is unreachable; at most one at a time. */
  const reconnect = () => {
    if (closed || connecting) return;
    connectOnce().then(
      () => logger.info('Kafka reachable again; paid calls are served'),
      (err: unknown) => {
        // Tried every few seconds through an outage: said once in a while, not each time.
        if (Date.now() - lastStillUnreachable < STILL_UNREACHABLE_EVERY_MS) return;
        lastStillUnreachable = Date.now();
        logger.warn('Kafka still unreachable; paid calls are refused until it answers', { err: errorMessage(err) });
      },
    );
  };

  // Reconnects go on by themselves while Kafka is unreachable, so the first calls after it is
  // back are served, rather than refused while the reconnect they start is under way.
  const retrySoon = () => {
    if (closed || retryTimer) return;
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      if (failing && !producer) reconnect();
    }, RECONNECT_EVERY_MS);
    retryTimer.unref();
  };

  const unreachable = () => meteringUnavailable(new Error('Kafka is unreachable; a reconnect is under way'));

  const getProducer = async (): Promise<Producer> => {
    if (producer) return producer;
    if (failing) {
      reconnect();
      throw unreachable();
    }
    return connectOnce();
  };

  // Settling refused calls writes to the ledger: close() waits for it, as for abandoned sends.
  const settle = (events: UsageEvent[]) => {
    const settling = settleRefusedCalls(events, options.recordRefused, logger, 'Kafka topic');
    abandoned.add(settling);
    void settling.finally(() => abandoned.delete(settling));
  };

  const giveUp = (p: Producer) => {
    if (producer === p) producer = undefined;
    failing = true;
    retrySoon();
  };

  const batches = createBatchPublisher<Pending>(
    async (batch) => {
      // Callers refused while their event waited in the queue: it is never sent.
      const live = batch.filter((e) => !e.refused);
      if (live.length === 0) return;
      const deadline = Math.min(...live.map((e) => e.deadline));
      let p: Producer;
      try {
        p = await within(getProducer(), deadline);
      } catch (err) {
        throw meteringUnavailable(err);
      }
      // Callers whose own deadline passed while the producer connected (their timers and this
      // batch's can fire in different turns): refused, so not sent either.
      const sending = live.filter((e) => !e.refused);
      if (sending.length === 0) return;
      const messages: Message[] = sending.map(({ event }) => ({ key: event.organizationId, value: JSON.stringify(event), headers: { 'usage-event-version': String(event.v) } }));
      // kafkajs reads this very array again on each retry of the send (kafkajs 2.2: sendMessages
      // groups `messages` per attempt): emptied, its later attempts send nothing. Pass it, never
      // a copy; test/kafka-sink-outage.test.ts fails if a kafkajs upgrade changes that.
      const acknowledged = p.send({ topic, acks: -1, messages });
      const abandon = () => {
        messages.length = 0;
      };
      for (const e of sending) e.abandon = abandon;
      sendsUnderWay++;
      try {
        const results = await within(acknowledged, deadline);
        batchesAcknowledged++;
        // A caller refused at the very moment its request was on the wire: sent all the same
        // (an emptied send acknowledges nothing).
        const refusedYetSent = sending.filter((e) => e.refused);
        if (refusedYetSent.length > 0 && results.length > 0) settle(refusedYetSent.map((e) => e.event));
      } catch (err) {
        abandon();
        giveUp(p);
        const eventIds = sending.map((e) => e.event.eventId);
        if (err instanceof DeadlinePassed) {
          // Sent, and neither acknowledged nor refused: the broker may have stored them (a
          // broker that stalls stores what it had read once it resumes, and kafkajs, whose own
          // request timeout may have fired first, never hears of it). Recorded as refused now,
          // before the worker could meet them, so that they are not charged if they arrive.
          logger.warn('usage events not acknowledged by Kafka within the deadline; refusing their calls', { err: errorMessage(err), events: eventIds.length });
          settle(sending.map((e) => e.event));
          // kafkajs is still retrying: disconnect once it stops (a disconnect now would only make
          // it reconnect). A request it had already sent may still be acknowledged: recorded above.
          const rest = acknowledged.then(() => {}, () => {}).finally(() => p.disconnect().catch(() => {}));
          abandoned.add(rest);
          void rest.finally(() => abandoned.delete(rest));
        } else {
          // A send that failed after being sent may have been stored all the same (every
          // acknowledgement lost): recorded as refused too, which costs nothing if it was not.
          logger.error('usage events not acknowledged by Kafka; refusing their calls', { err: errorMessage(err), events: eventIds.length });
          settle(sending.map((e) => e.event));
          void p.disconnect().catch(() => {});
        }
        throw meteringUnavailable(err);
      } finally {
        sendsUnderWay--;
        for (const e of sending) e.abandon = undefined;
      }
    },
    { maxBatch: options.maxBatch ?? 1_000, lingerMs: options.lingerMs ?? 2 },
  );

  /** Kafka's metadata (its brokers), asked on the check's own connection. */
  const describeCluster = async (admin: Admin) => {
    const cluster = await admin.describeCluster();
    brokers = cluster.brokers.map(({ host, port }) => ({ host, port }));
  };

  // Connected while Kafka answers (with the producer), so the brokers are known before any outage.
  const prepareChecker = (): Promise<Admin> => {
    if (checker) return checker.connected;
    const admin = kafka.admin();
    const connected = (async () => {
      try {
        await admin.connect();
        await describeCluster(admin);
        return admin;
      } catch (err) {
        await admin.disconnect().catch(() => {});
        throw err;
      }
    })();
    const made = { admin, connected };
    checker = made;
    // A connect that failed is not kept: the next check tries again (and counts the failure).
    connected.catch(() => {
      if (checker === made) checker = undefined;
    });
    return connected;
  };

  // Kept through checks that fail otherwise, dropped after one with no answer (its connection
  // may be stuck), once Kafka counts as unreachable (checks stop until a reconnect succeeds,
  // which makes a new one) and on close. Disconnected at once, which ends a request under way
  // (close() waits for that, not for a stuck request), and again once a connect still under way
  // has ended, should kafkajs's retries have completed it meanwhile.
  const dropChecker = () => {
    const dropped = checker;
    checker = undefined;
    if (!dropped) return;
    const disconnecting = dropped.admin.disconnect().catch(() => {});
    abandoned.add(disconnecting);
    void disconnecting.finally(() => abandoned.delete(disconnecting));
    void dropped.connected.then(() => dropped.admin.disconnect(), () => {}).catch(() => {});
  };

  // First the brokers themselves: kafkajs admin clients keep no metadata, so during an outage
  // every admin request goes through kafkajs's client-wide connect retries (about nine seconds)
  // before it fails, and a broker that is down would be told only by the check's deadline.
  // Refused by every broker, the check fails at once. Then one metadata request, for no topic (a
  // producer allowed to write its topic may not be allowed to describe others): a broker that
  // takes connections but does not answer fails at the deadline.
  const askKafka = async () => {
    const refused = await refusedByEveryBroker(brokers, IDLE_CHECK_DEADLINE_MS);
    if (refused) throw refused;
    await describeCluster(await prepareChecker());
  };

  /** One idle check of Kafka while `p` is the producer; counts Kafka unreachable after enough failures. */
  const check = async (p: Producer): Promise<void> => {
    const acknowledgedBefore = batchesAcknowledged;
    let failure: unknown;
    try {
      await within(askKafka(), Date.now() + IDLE_CHECK_DEADLINE_MS);
      failedChecks = 0;
      return;
    } catch (err) {
      failure = err;
      if (err instanceof DeadlinePassed) dropChecker();
    }
    // What a send found out meanwhile outweighs the check: the sink was closed, the producer
    // was given up or replaced, or Kafka acknowledged a batch, or a send is still under way
    // and will tell (given up if it fails).
    if (closed || producer !== p || batchesAcknowledged !== acknowledgedBefore || sendsUnderWay > 0) {
      failedChecks = 0;
      return;
    }
    if (!(failure instanceof DeadlinePassed) && !failedToReachKafka(failure)) {
      failedChecks = 0;
      logger.warnRepeating('kafka idle check', 'Kafka idle check failed for a reason other than reaching Kafka; not counted', { err: errorMessage(failure) });
      return;
    }
    if (++failedChecks < IDLE_CHECK_FAILURES) return;
    failedChecks = 0;
    // As after a failed send: no producer, calls refused at once, reconnects every 2 s; the
    // first that succeeds says "reachable again". Said once here; "still unreachable" after 30 s.
    producer = undefined;
    failing = true;
    void p.disconnect().catch(() => {});
    dropChecker();
    retrySoon();
    lastStillUnreachable = Date.now();
    logger.warn('Kafka unreachable; paid calls are refused until it answers', { err: errorMessage(failure) });
  };

  const checkTimer = setInterval(() => {
    if (closed || checking || !producer) return;
    // Acknowledged since the last tick: Kafka answers, and the replica is not idle.
    if (batchesAcknowledged !== batchesAcknowledgedAtLastTick || sendsUnderWay > 0) {
      batchesAcknowledgedAtLastTick = batchesAcknowledged;
      failedChecks = 0;
      return;
    }
    checking = check(producer).finally(() => {
      checking = undefined;
    });
  }, IDLE_CHECK_EVERY_MS);
  checkTimer.unref();

  return {
    connect: async () => {
      try {
        await connectOnce();
      } catch (err) {
        // Closed before Kafka answered (a start-up that failed elsewhere): nothing to report.
        if (!closed) throw err;
      }
    },
    reachable: () => producer !== undefined && !closed,
    publish(event) {
      if (closed) return Promise.reject(meteringUnavailable(new Error('usage sink closed')));
      if (failing && !producer) {
        reconnect();
        return Promise.reject(unreachable());
      }
      const entry: Pending = { event, deadline: Date.now() + deadlineMs, refused: false };
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          entry.refused = true;
          entry.abandon?.();
          reject(meteringUnavailable(new Error(`Kafka did not acknowledge within ${deadlineMs} ms`)));
        }, deadlineMs);
        batches.add(entry).then(
          () => {
            clearTimeout(timer);
            resolve();
          },
          (err: unknown) => {
            clearTimeout(timer);
            reject(err);
          },
        );
      });
    },
    async close() {
      closed = true;
      clearTimeout(retryTimer);
      clearInterval(checkTimer);
      // A check under way ends with its connection: not waited for up to its deadline.
      dropChecker();
      await checking;
      // Deliver what was accepted before closing: those callers are waiting for their answer.
      await batches.drain();
      // A connect still under way (a start-up that failed elsewhere) disconnects when it ends.
      await connecting?.catch(() => {});
      await Promise.allSettled([...abandoned]);
      if (producer) await producer.disconnect().catch(() => {});
      producer = undefined;
    },
  };
}

/** A wait for Kafka that outlived the caller's deadline. */
class DeadlinePassed extends Error {
  override name = 'DeadlinePassed';
}

/** `promise`, or a DeadlinePassed rejection at `deadline` (Date.now() time); the promise goes on. */
function within<T>(promise: Promise<T>, deadline: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new DeadlinePassed('Kafka did not answer before the deadline')), Math.max(0, deadline - Date.now()));
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
