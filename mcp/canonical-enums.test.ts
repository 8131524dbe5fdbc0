import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { withCanonicalEnums } from './canonical-enums.js';

const schema = z.strictObject({
  form: z.enum(['SRL', 'SRLS', 'SPA']).optional(),
  role: z.enum(['legal_representative', 'director']).default('director'),
  categories: z.array(z.enum(['balance_sheet', 'revenue'])).min(1).optional(),
  loose: z.enum(['ab', 'a_b']).optional(),
  name: z.string().optional(),
});

describe('withCanonicalEnums', () => {
  it('when a closed-list value differs from an option only in case, spaces, dots, hyphens or underscores then it is that option, in lists too', () => {
    expect(withCanonicalEnums(schema, { form: 's.r.l.', role: 'Legal Representative', categories: ['Balance-Sheet', 'REVENUE'], name: 's.r.l.' }))
      .toEqual({ form: 'SRL', role: 'legal_representative', categories: ['balance_sheet', 'revenue'], name: 's.r.l.' });
    expect(withCanonicalEnums(schema, { form: 'Srls' })).toEqual({ form: 'SRLS' });
  });

  it('when a value names no option, or two, or is not a string, then it is left for the schema to refuse', () => {
    expect(withCanonicalEnums(schema, { form: 'srlx', loose: 'A-B', role: 3, categories: 'revenue' })).toEqual({ form: 'srlx', loose: 'A-B', role: 3, categories: 'revenue' });
    expect(schema.safeParse(withCanonicalEnums(schema, { form: 'srlx' })).success).toBe(false);
    for (const args of [null, 'text', [1], undefined]) expect(withCanonicalEnums(schema, args)).toBe(args);
  });

  it('when arguments are canonical or unknown then they pass through unchanged', () => {
    const args = { form: 'SPA', extra: 'x' };
    expect(withCanonicalEnums(schema, args)).toEqual(args);
  });
});
