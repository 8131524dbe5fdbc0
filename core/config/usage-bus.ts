import { ConfigError } from './parse-config.js';
import type { Config } from './config-schema.js';

export type UsageBusKind = 'kafka' | 'postgres';

/**
 * Which bus a process publishes usage events to, or a billing worker reads them from: Kafka when
 * KAFKA_BROKERS is set, else the Postgres bus. Every process of a deployment must agree, or the
 * calls of one are never billed: an API on the Postgres bus next to workers on Kafka serves its
 * calls and nobody applies them. So in production, where the compose file runs Kafka, the
 * Postgres bus has to be asked for by name (USAGE_BUS=postgres), and a forgotten or misspelt
 * KAFKA_BROKERS stops the process at start instead.
 */
export function chooseUsageBus(config: Pick<Config, 'NODE_ENV' | 'KAFKA_BROKERS' | 'USAGE_BUS'>): UsageBusKind {
  if (config.USAGE_BUS === 'kafka' && !config.KAFKA_BROKERS) {
    throw new ConfigError(['USAGE_BUS: kafka, but KAFKA_BROKERS is not set: set it to the brokers (host:port, comma-separated)']);
  }
  if (config.USAGE_BUS === 'postgres' && config.KAFKA_BROKERS) {
    throw new ConfigError(['USAGE_BUS: postgres, but KAFKA_BROKERS is set too: unset one of them, so that every process uses the same bus']);
  }
  if (config.KAFKA_BROKERS) return 'kafka';
  if (config.NODE_ENV === 'production' && config.USAGE_BUS !== 'postgres') {
    throw new ConfigError([
      'KAFKA_BROKERS: required when NODE_ENV is production, where usage events go through Kafka; or set USAGE_BUS=postgres to use the Postgres usage bus instead (every API, tool server and billing worker of the deployment must then use it)',
    ]);
  }
  return 'postgres';
}
