import { describe, expect, it } from 'vitest';
import { retryOnDroppedConnection } from './connection-failure.js';

// A statement failing on a pooled connection the server dropped: pg's own error for it.
const dropped = () => Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });

describe('retryOnDroppedConnection', () => {
  it('when a read fails on a dropped connection then it is tried again at once, up to twice; a third failure is the answer', async () => {
    const failures: Error[] = [];
    let loads = 0;
    const read = (value: string) => async () => {
      loads++;
      const failure = failures.shift();
      if (failure) throw failure;
      return value;
    };
    failures.push(dropped(), dropped());
    expect(await retryOnDroppedConnection(read('a'))).toBe('a');
    expect(loads).toBe(3);
    failures.push(dropped(), dropped(), dropped());
    await expect(retryOnDroppedConnection(read('b'))).rejects.toMatchObject({ code: '57P01' });
    expect(loads).toBe(6);
  });

  it('when a read fails otherwise, or the caller says stop, then it is not retried', async () => {
    let loads = 0;
    await expect(retryOnDroppedConnection(async () => {
      loads++;
      throw new Error('syntax error');
    })).rejects.toThrow('syntax error');
    expect(loads).toBe(1);
    await expect(retryOnDroppedConnection(async () => {
      loads++;
      throw dropped();
    }, () => true)).rejects.toMatchObject({ code: '57P01' });
    expect(loads).toBe(2);
  });
});
