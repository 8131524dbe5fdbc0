import { describe, expect, it } from 'vitest';
import { parseConfig } from './parse-config.js';
import { chooseUsageBus } from './usage-bus.js';

const bus = (env: Record<string, string>) => chooseUsageBus(parseConfig(env));

describe('choosing the usage bus', () => {
  it('when KAFKA_BROKERS is set then Kafka, else the Postgres bus outside production', () => {
    expect(bus({ KAFKA_BROKERS: 'kafka:9092' })).toBe('kafka');
    expect(bus({ KAFKA_BROKERS: 'kafka:9092', NODE_ENV: 'production' })).toBe('kafka');
    expect(bus({ KAFKA_BROKERS: 'kafka:9092', USAGE_BUS: 'kafka' })).toBe('kafka');
    expect(bus({})).toBe('postgres');
    expect(bus({ NODE_ENV: 'test' })).toBe('postgres');
  });

  it('when NODE_ENV is production without KAFKA_BROKERS then the Postgres bus only if USAGE_BUS=postgres asks for it', () => {
    expect(() => bus({ NODE_ENV: 'production' })).toThrow(/KAFKA_BROKERS: required when NODE_ENV is production.*USAGE_BUS=postgres/);
    expect(bus({ NODE_ENV: 'production', USAGE_BUS: 'postgres' })).toBe('postgres');
  });

  it('when USAGE_BUS and KAFKA_BROKERS disagree then neither is guessed', () => {
    expect(() => bus({ USAGE_BUS: 'kafka' })).toThrow('USAGE_BUS: kafka, but KAFKA_BROKERS is not set');
    expect(() => bus({ USAGE_BUS: 'postgres', KAFKA_BROKERS: 'kafka:9092' })).toThrow('USAGE_BUS: postgres, but KAFKA_BROKERS is set too');
    expect(() => parseConfig({ USAGE_BUS: 'redis' })).toThrow(/USAGE_BUS/);
  });
});
