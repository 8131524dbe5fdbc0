import { describe, expect, it } from 'vitest';
import { clusterId } from './kafka-local.js';

describe('clusterId', () => {
  it('when many cluster ids are drawn then none starts with a dash, so StorageTool never reads one as an option', () => {
    // 2,000 draws: a plain base64url id starts with '-' once in 64, so about 31 would here.
    const ids = Array.from({ length: 2_000 }, clusterId);
    expect(ids.filter((id) => id.startsWith('-'))).toEqual([]);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
