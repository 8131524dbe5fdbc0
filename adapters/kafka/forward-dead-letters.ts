import { createHash } from 'node:crypto';
import type { Message, Producer } from 'kafkajs';
import { causeChain } from '../../core/errors/index.js';
import type { Logger } from '../../core/logging/index.js';
import type { DeadLetter } from '../../core/usage/index.js';

// What a stand-in keeps of the original: enough to see what kind of message it was.
const STAND_IN_PREFIX_BYTES = 512;

const refusedAsTooLarge = (err: unknown): boolean => causeChain(err).some((e) => (e as { type?: unknown } | null)?.type === 'MESSAGE_TOO_LARGE');

export interface ForwardDeadLettersOptions {
  producer: Producer;
  topic: string;
  logger: Logger;
}

/**
 * Sends dead letters to the dead-letter topic. One the topic refuses as too large (larger than
 * its `max.message.bytes`: the headers we add can push a message near the usage topic's limit
 * over it, or the topic is configured smaller) is replaced by a stand-in: same key and headers,
 * plus `dead-letter-truncated` (the original's byte length) and `dead-letter-sha256`, and at
 * most the first 512 bytes of the original, or none ("the original": the dead letter's text in
 * UTF-8, the message's own bytes unless they were not UTF-8). Kafka does not retry
 * MESSAGE_TOO_LARGE: sending the whole letter again would crash the consumer on every restart
 * and never bill that partition again. The original stays findable at `dead-letter-source` while the usage topic
 * keeps it, and whole in the `usage_dead_letters` row, which is what a replay reads.
 *
 * The broker's refusal is the trigger, rather than sizing against the topic's limit read
 * beforehand (describeConfigs): only the broker knows a batch's encoded size (record overhead,
 * headers, compression), the limit can change while we run, and reading it takes one more ACL.
 * A refusal costs little: a partition's broker writes none of a batch it refuses, and kafkajs
 * gives the idempotent producer its sequence numbers back. Letters bound for other partitions
 * of the dead-letter topic may have been written before one was refused; sent again one by one,
 * they are there twice (the topic takes dead letters at least once; the table keeps each once). A topic that refuses even an empty stand-in is
 * misconfigured; that refusal is thrown (a crash kafkajs does not restart from: see the consumer).
 */
export async function forwardDeadLetters(dead: DeadLetter[], options: ForwardDeadLettersOptions): Promise<void> {
  const { producer, topic } = options;
  const send = (messages: Message[]) => producer.send({ topic, acks: -1, messages });
  const letter = (d: DeadLetter): Message => ({ key: d.ref, value: d.value, headers: { 'dead-letter-reason': d.reason, 'dead-letter-source': d.ref } });
  const alone = async (d: DeadLetter) => {
    try {
      await send([letter(d)]);
    } catch (err) {
      if (!refusedAsTooLarge(err)) throw err;
      await sendStandIn(d, send, options);
    }
  };
  if (dead.length === 1) return alone(dead[0]!);
  if (dead.length === 0) return;
  try {
    await send(dead.map(letter));
  } catch (err) {
    if (!refusedAsTooLarge(err)) throw err;
    // The limit holds for a whole batch: letters that fit one by one may not fit together.
    for (const d of dead) await alone(d);
  }
}

async function sendStandIn(d: DeadLetter, send: (messages: Message[]) => Promise<unknown>, { topic, logger }: ForwardDeadLettersOptions): Promise<void> {
  const original = Buffer.from(d.value, 'utf8');
  const sha256 = createHash('sha256').update(original).digest('hex');
  const headers = {
    'dead-letter-reason': d.reason,
    'dead-letter-source': d.ref,
    'dead-letter-truncated': String(original.length),
    'dead-letter-sha256': sha256,
  };
  const values = original.length > STAND_IN_PREFIX_BYTES ? [original.subarray(0, STAND_IN_PREFIX_BYTES), Buffer.alloc(0)] : [Buffer.alloc(0)];
  let refusal: unknown;
  for (const value of values) {
    try {
      await send([{ key: d.ref, value, headers }]);
    } catch (err) {
      if (!refusedAsTooLarge(err)) throw err;
      refusal = err;
      continue;
    }
    logger.warn('usage dead letter truncated: the dead-letter topic refused it as too large, so a stand-in went there; the original is at its source', {
      ref: d.ref, topic, bytes: original.length, kept: value.length, sha256,
    });
    return;
  }
  throw refusal;
}
