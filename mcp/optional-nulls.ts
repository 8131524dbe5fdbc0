import type { z } from 'zod';

// OpenAI's strict function calling, and the agents built on it, send every argument a tool has,
// with null for those the model leaves out; so does a model that passes back a last page's
// `nextCursor: null` as `cursor`. Each such call was refused ("province: Invalid input: expected
// string, received null") until its developer stripped the nulls. A null where the argument may
// be left out is read as leaving it out; a null where the argument is required is left for the
// schema to refuse (as "required": argument-details.ts).

/** `args` without the null arguments the schema lets a caller leave out. Not a validation. */
export function withoutOptionalNulls(schema: z.ZodObject, args: unknown): unknown {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return args;
  const shape = schema.shape as Record<string, z.ZodType>;
  const out: Record<string, unknown> = { ...(args as Record<string, unknown>) };
  for (const [key, value] of Object.entries(out)) {
    const field = Object.hasOwn(shape, key) ? shape[key] : undefined;
    if (value === null && field && !field.safeParse(null).success && field.safeParse(undefined).success) delete out[key];
  }
  return out;
}
