import { inject } from 'vitest';
import { canControlKafka, restartKafkaBroker, startKafkaBroker, stopKafkaBroker, type StopOptions } from '../services/kafka-control.js';

/** The run's brokers; a clear failure when the run was started with TEST_SERVICES=postgres. */
export function kafkaBrokers(): string[] {
  const brokers = inject('kafkaBrokers');
  if (!brokers) throw new Error('this test needs Kafka: run without TEST_SERVICES=postgres');
  return brokers.split(',');
}

/** Whether a test may stop and start the broker (not when KAFKA_BROKERS names one we do not own). */
export function kafkaIsControllable(): Promise<boolean> {
  return canControlKafka(inject('kafkaControlFile'));
}

export function stopKafka(options?: StopOptions): Promise<void> {
  return stopKafkaBroker(inject('kafkaControlFile'), options);
}

/** Starts it again on the same address and log directory; resolves once it serves requests. */
export function startKafka(): Promise<void> {
  return startKafkaBroker(inject('kafkaControlFile'));
}

export function restartKafka(options?: StopOptions): Promise<void> {
  return restartKafkaBroker(inject('kafkaControlFile'), options);
}
