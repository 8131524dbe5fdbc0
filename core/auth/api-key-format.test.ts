import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AppError } from '../errors/index.js';
import { displayPrefix, generateApiKey, hashApiKey, isApiKeyShaped } from './api-key-format.js';
import { bearerToken } from './parse-authorization.js';

describe('API key format', () => {
  it('when a live key is generated then it is sk_live_ and 32 base62 characters', () => {
    const key = generateApiKey('live');
    expect(key).toMatch(/^sk_live_[0-9A-Za-z]{32}$/);
    expect(isApiKeyShaped(key)).toBe(true);
  });

  it('when a test key is generated then it starts with sk_test_', () => {
    expect(generateApiKey('test')).toMatch(/^sk_test_[0-9A-Za-z]{32}$/);
  });

  it('when many keys are generated then none repeats', () => {
    const keys = new Set(Array.from({ length: 1000 }, () => generateApiKey('live')));
    expect(keys.size).toBe(1000);
  });

  it('when a key is hashed then it is the hex SHA-256 of the whole key', () => {
    const key = generateApiKey('live');
    expect(hashApiKey(key)).toBe(createHash('sha256').update(key).digest('hex'));
    expect(hashApiKey(key)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('when a display prefix is taken then it shows the mode and 4 secret characters only', () => {
    const key = generateApiKey('live');
    expect(displayPrefix(key)).toBe(key.slice(0, 12));
    expect(displayPrefix(key)).toMatch(/^sk_live_[0-9A-Za-z]{4}$/);
  });

  it.each(['sk_live_short', 'pk_live_' + 'a'.repeat(32), 'sk_prod_' + 'a'.repeat(32), 'sk_live_' + 'a'.repeat(31) + '!', 'sk_live_' + 'a'.repeat(33)])(
    'when the token is %s then it is not key-shaped',
    (token) => expect(isApiKeyShaped(token)).toBe(false),
  );
});

describe('Authorization header', () => {
  // The refusal of a header, as { code, message }; 'ok' when it was accepted.
  const refusal = (header: string | undefined) => {
    try {
      bearerToken(header);
      return { code: 'ok', message: 'ok' };
    } catch (err) {
      return { code: (err as AppError).code as string, message: (err as AppError).message };
    }
  };
  const code = (header: string | undefined) => refusal(header).code;
  const message = (header: string | undefined) => refusal(header).message;

  it.each([undefined, '', 'Basic dXNlcjpwYXNz', 'sk_live_abc', 'Bearer', 'Bearer ', 'Token sk_live_abc'])(
    'when the header is %j then missing_api_key',
    (header) => expect(code(header)).toBe('missing_api_key'),
  );

  it('when the scheme is any case of Bearer then the token is returned', () => {
    expect(bearerToken('bearer abc')).toBe('abc');
    expect(bearerToken('BEARER  abc ')).toBe('abc');
  });

  it('when a header is sent but holds no usable key, then the message says what is wrong with it', () => {
    expect(message(undefined)).toBe('No API key: send Authorization: Bearer <API_KEY>.');
    expect(message('')).toBe('No API key: send Authorization: Bearer <API_KEY>.');
    for (const header of ['Basic dXNlcjpwYXNz', 'sk_live_abc', 'Token sk_live_abc', 'Bearersk_live_abc']) {
      expect(message(header)).toBe('The Authorization header is not a bearer key: send Authorization: Bearer <API_KEY>.');
    }
    for (const header of ['Bearer', 'Bearer ', 'Bearer sk_live_a sk_live_b', 'Bearer sk_live_\u00a0x']) {
      expect(message(header)).toBe('The Authorization header holds no API key: send Authorization: Bearer <API_KEY>, one key with no spaces in it.');
    }
  });
});
