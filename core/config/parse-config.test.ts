import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, configSchema, configVariables, parseConfig } from './index.js';

describe('parseConfig', () => {
  it('when the environment is empty, then every variable takes its default', () => {
    const config = parseConfig({});
    expect(config.NODE_ENV).toBe('development');
    expect(config.API_PORT).toBe(3000);
    expect(config.MCP_PORT).toBe(3001);
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.KAFKA_BROKERS).toBeUndefined();
    expect(config.MIGRATE_ON_START).toBe(true);
    expect(config.KAFKA_PARTITIONS).toBe(6);
  });

  it('when values are strings, then they are coerced to numbers, booleans and lists', () => {
    const config = parseConfig({
      API_PORT: '8080',
      MIGRATE_ON_START: 'no',
      KAFKA_BROKERS: 'kafka-1:9092, kafka-2:9092',
      KEY_CACHE_TTL_MS: '5000',
      DATABASE_URL: 'postgres://u:p@db:5432/companies',
    });
    expect(config.API_PORT).toBe(8080);
    expect(config.MIGRATE_ON_START).toBe(false);
    expect(config.KAFKA_BROKERS).toEqual(['kafka-1:9092', 'kafka-2:9092']);
    expect(config.KEY_CACHE_TTL_MS).toBe(5000);
    expect(config.DATABASE_URL).toBe('postgres://u:p@db:5432/companies');
  });

  it('when a variable is empty, then it counts as not set', () => {
    expect(parseConfig({ DATABASE_URL: '', API_PORT: '' }).API_PORT).toBe(3000);
  });

  it('when a variable holds only spaces, then it counts as not set too, not as port 0 (a random port)', () => {
    expect(parseConfig({ API_PORT: ' ', MCP_PORT: '\t' })).toMatchObject({ API_PORT: 3000, MCP_PORT: 3001 });
  });

  it('when a URL has a scheme its client does not speak, then the variable is refused saying which schemes it takes', () => {
    let error: unknown;
    try {
      parseConfig({ PUBLIC_BASE_URL: 'localhost:3000', DATABASE_URL: 'mysql://root:pw@127.0.0.1:3306/x', REDIS_URL: 'http://127.0.0.1:6379' });
    } catch (err) {
      error = err;
    }
    expect((error as ConfigError).problems.sort()).toEqual([
      'DATABASE_URL: must be a postgres://, postgresql:// or socket: URL',
      'PUBLIC_BASE_URL: must be an http:// or https:// URL',
      'REDIS_URL: must be a redis:// or rediss:// URL',
    ]);
    // pg's own forms for a Unix socket pass too.
    for (const url of ['socket:/var/run/postgresql?db=companies', 'postgres:///companies?host=/var/run/postgresql']) expect(parseConfig({ DATABASE_URL: url }).DATABASE_URL).toBe(url);
    expect(parseConfig({ DATABASE_URL: 'postgresql://u@db/x', REDIS_URL: 'rediss://cache:6380', PUBLIC_BASE_URL: 'https://api.example.com' })).toMatchObject({
      DATABASE_URL: 'postgresql://u@db/x', REDIS_URL: 'rediss://cache:6380', PUBLIC_BASE_URL: 'https://api.example.com',
    });
  });

  it('when a public address has a user, query, fragment, quote or space, then it is refused: clients append paths to it and the served guide quotes it in shell commands', () => {
    const problems = (value: string) => {
      try {
        parseConfig({ PUBLIC_BASE_URL: value, PUBLIC_MCP_URL: value, PUBLIC_DASHBOARD_URL: value });
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    };
    for (const bad of ["https://api.example.com/it's", 'https://api.example.com/?v=1', 'https://api.example.com/#top', 'https://ops:pw@api.example.com', 'https://api.example.com/a"b', 'https://api.example.com/a\\b']) {
      expect(problems(bad), bad).toEqual(['PUBLIC_BASE_URL', 'PUBLIC_MCP_URL', 'PUBLIC_DASHBOARD_URL'].map((name) => `${name}: must be an address clients append paths to, like https://api.example.com or https://example.com/api: no user, ?query, #fragment, quotes or spaces`));
    }
    for (const good of ['https://api.example.com', 'https://example.com/api/', 'http://127.0.0.1:3000']) expect(problems(good), good).toEqual([]);
  });

  it('when BILLING_BATCH_STALL_MS is unset, then a batch may take two minutes; under a second, over what Postgres takes, or not a whole number of milliseconds, it is refused by name', () => {
    expect(parseConfig({}).BILLING_BATCH_STALL_MS).toBe(120_000);
    expect(parseConfig({ BILLING_BATCH_STALL_MS: '2000' }).BILLING_BATCH_STALL_MS).toBe(2_000);
    const problems = (value: string) => {
      try {
        parseConfig({ BILLING_BATCH_STALL_MS: value });
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    };
    expect(problems('999')).toEqual(['BILLING_BATCH_STALL_MS: must be at least 1000 (milliseconds), got 999']);
    expect(problems('0')).toEqual(['BILLING_BATCH_STALL_MS: must be at least 1000 (milliseconds), got 0']);
    // Postgres's idle_in_transaction_session_timeout, which the worker's pool sets to it, is a 32-bit int.
    expect(problems('2147483648')).toEqual(['BILLING_BATCH_STALL_MS: must be at most 2147483647 (milliseconds), got 2147483648']);
    expect(parseConfig({ BILLING_BATCH_STALL_MS: '2147483647' }).BILLING_BATCH_STALL_MS).toBe(2_147_483_647);
    for (const value of ['1500.5', 'two minutes', '2m']) expect(problems(value)).toEqual([expect.stringMatching(/^BILLING_BATCH_STALL_MS: /)]);
  });

  it('when a numeric variable is written in hex, as an exponent, a fraction or a word, then it is refused naming the variable and the value, whichever numeric variable it is', () => {
    const problems = (env: Record<string, string>) => {
      try {
        parseConfig(env);
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    };
    const numeric = configVariables.filter((name) => {
      // Every variable whose parsed value is a number, found from the schema's own defaults.
      const value = (parseConfig({}) as Record<string, unknown>)[name];
      return typeof value === 'number';
    });
    expect(numeric).toEqual(expect.arrayContaining(['API_PORT', 'MCP_PORT', 'DASHBOARD_PORT', 'EMBEDDED_PG_PORT', 'DATABASE_POOL_MAX', 'KAFKA_PARTITIONS', 'SAMPLE_SEED', 'SAMPLE_COMPANIES', 'KEY_CACHE_TTL_MS', 'MIGRATION_LOCK_TIMEOUT_MS']));
    // BILLING_WORKER_PORT has no default: it is numeric too.
    for (const name of [...numeric, 'BILLING_WORKER_PORT']) {
      // 0x1F90 listened on 8080 and 1e3 on 1000; abc said "expected number, received NaN".
      for (const value of ['0x1F90', '1e3', '0b101', '0o17', '1500.5', '+1500', 'abc', 'Infinity', '1_000']) {
        expect(problems({ [name]: value }), `${name}=${value}`).toEqual([`${name}: must be a whole number in decimal digits, got ${value}`]);
      }
    }
    // What is refused is shown so that it can be seen, even when it is not printable.
    expect(problems({ API_PORT: '80\u000080' })).toEqual(['API_PORT: must be a whole number in decimal digits, got "80\\u000080"']);
    expect(problems({ API_PORT: '70000', DATABASE_POOL_MAX: '0', KEY_CACHE_TTL_MS: '9999999999' })).toEqual([
      'DATABASE_POOL_MAX: must be at least 1, got 0',
      'API_PORT: must be a port from 0 to 65535, got 70000',
      'KEY_CACHE_TTL_MS: must be at most 2147483647 (milliseconds), got 9999999999',
    ]);
    // Decimal digits still parse, spaces around them too; SAMPLE_SEED takes a minus.
    expect(parseConfig({ API_PORT: '8080', BILLING_WORKER_PORT: ' 3003 ', SAMPLE_SEED: '-42', MIGRATION_LOCK_TIMEOUT_MS: '0' })).toMatchObject({
      API_PORT: 8080, BILLING_WORKER_PORT: 3003, SAMPLE_SEED: -42, MIGRATION_LOCK_TIMEOUT_MS: 0,
    });
    expect(problems({ API_PORT: '-1' })).toEqual(['API_PORT: must be a whole number in decimal digits, got -1']);
  });

  it('when REDIS_KEY_PREFIX is unset, then the rate limiter keeps the keys of before; with a space, a control character or over 64 characters it is refused by name', () => {
    expect(parseConfig({}).REDIS_KEY_PREFIX).toBe('ratelimit:');
    expect(parseConfig({ REDIS_KEY_PREFIX: 'staging:ratelimit:' }).REDIS_KEY_PREFIX).toBe('staging:ratelimit:');
    expect(parseConfig({ REDIS_KEY_PREFIX: 'p'.repeat(64) }).REDIS_KEY_PREFIX).toBe('p'.repeat(64));
    const problems = (value: string) => {
      try {
        parseConfig({ REDIS_KEY_PREFIX: value });
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    };
    const refused = 'REDIS_KEY_PREFIX: must be letters, digits or punctuation, without spaces or control characters';
    for (const value of ['staging ratelimit:', ' staging:', 'staging:\t', 'staging:\u0000', 'prod\nratelimit:', 'produzione\u00a0:']) expect(problems(value)).toEqual([refused]);
    expect(problems('p'.repeat(65))).toEqual(['REDIS_KEY_PREFIX: must be at most 64 characters']);
  });

  it('when MCP_ALLOWED_ORIGINS lists origins, then they are kept as browsers send them; * alone means any; anything that is not an origin is refused naming the entry', () => {
    expect(parseConfig({}).MCP_ALLOWED_ORIGINS).toBeUndefined();
    expect(parseConfig({ MCP_ALLOWED_ORIGINS: 'https://App.Example.com:443, http://localhost:5173,' }).MCP_ALLOWED_ORIGINS).toEqual(['https://app.example.com', 'http://localhost:5173']);
    expect(parseConfig({ MCP_ALLOWED_ORIGINS: ' * ' }).MCP_ALLOWED_ORIGINS).toBe('*');
    const problems = (value: string) => {
      try {
        parseConfig({ MCP_ALLOWED_ORIGINS: value });
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    };
    const notAnOrigin = (entry: string, example = 'https://app.example.com') =>
      `MCP_ALLOWED_ORIGINS: "${entry}" is not an origin: write http(s)://host[:port] with nothing after it, e.g. ${example}`;
    expect(problems('https://app.example.com/')).toEqual([notAnOrigin('https://app.example.com/')]);
    expect(problems('https://app.example.com/mcp, https://user@b.example.com')).toEqual([notAnOrigin('https://app.example.com/mcp'), notAnOrigin('https://user@b.example.com', 'https://b.example.com')]);
    for (const entry of ['app.example.com', 'localhost:3000', 'ftp://files.example.com', 'null']) expect(problems(entry)).toEqual([notAnOrigin(entry)]);
    for (const entry of ['http://localhost:*', 'https://*.example.com']) {
      expect(problems(entry)).toEqual([`MCP_ALLOWED_ORIGINS: "${entry}": wildcards are not supported; list each origin, or give * alone to allow any`]);
    }
    expect(problems('*, https://app.example.com')).toEqual(['MCP_ALLOWED_ORIGINS: * allows any origin: give it alone, not in a list']);
  });

  it('when variables unknown to the schema are present, then they are ignored', () => {
    expect(() => parseConfig({ PATH: '/usr/bin', HOME: '/root' })).not.toThrow();
  });

  it('when several values are wrong, then one ConfigError lists every problem by variable', () => {
    let error: unknown;
    try {
      parseConfig({ API_PORT: 'eighty', KAFKA_BROKERS: 'no-port', NODE_ENV: 'staging', MIGRATE_ON_START: 'maybe' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems).toHaveLength(4);
    for (const variable of ['API_PORT', 'KAFKA_BROKERS', 'NODE_ENV', 'MIGRATE_ON_START']) {
      expect(problems.some((p) => p.startsWith(`${variable}`))).toBe(true);
      expect((error as ConfigError).message).toContain(variable);
    }
  });

  it('when a required value is missing next to a bad value, then both are listed in one ConfigError', () => {
    // Every variable of configSchema has a default today, so a process-specific schema that
    // requires one (as a production deployment would require DATABASE_URL) stands in.
    const strict = configSchema.extend({ DATABASE_URL: z.string().url() });
    let error: unknown;
    try {
      parseConfig({ DATABASE_URL: '', API_PORT: '70000' }, strict);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems.map((p) => p.split(':')[0]).sort()).toEqual(['API_PORT', 'DATABASE_URL']);
    expect((error as ConfigError).message).toMatch(/API_PORT[\s\S]*DATABASE_URL|DATABASE_URL[\s\S]*API_PORT/);
  });

  it('when listing the variables, then configVariables names every key of the schema', () => {
    expect(configVariables).toContain('DATABASE_URL');
    expect(configVariables).toContain('KAFKA_BROKERS');
    expect(new Set(configVariables).size).toBe(configVariables.length);
  });
});
