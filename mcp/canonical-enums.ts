import { z } from 'zod';

// Agents write closed-list values as people say them: naceSection "j", legalForm "S.r.l." or
// "srl", size "Micro", roleCategory "legal representative". Each was refused as invalid_params,
// the model retried with the list the error gave it, and the call cost a round trip for nothing.
// A value that names exactly one option once case, spaces, dots, hyphens and underscores are set
// aside is read as that option; any other is left as written, for the schema to refuse with the
// list. The input schema the tool publishes still lists the options as they are.

const looseKey = (value: string) => value.toLowerCase().replace(/[\s._-]+/g, '');

/** The schema under optional(), default() and nullable(): what a value given must match. */
function innerType(schema: z.ZodType): z.ZodType {
  let current = schema;
  while (current instanceof z.ZodOptional || current instanceof z.ZodDefault || current instanceof z.ZodNullable) current = current.unwrap() as z.ZodType;
  return current;
}

function canonicalOption(schema: z.ZodEnum, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const options = schema.options as readonly unknown[];
  if (options.includes(value)) return value;
  const matches = options.filter((option) => typeof option === 'string' && looseKey(option) === looseKey(value));
  return matches.length === 1 ? matches[0] : value;
}

/**
 * `args` with each value of a closed-list argument (or of a list of them) that a caller spelled
 * in another case or with dots or spaces replaced by the option it names. Not a validation: the
 * result still goes through the schema, and anything not an object comes back as it was.
 */
export function withCanonicalEnums(schema: z.ZodObject, args: unknown): unknown {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return args;
  const shape = schema.shape as Record<string, z.ZodType>;
  const out: Record<string, unknown> = { ...(args as Record<string, unknown>) };
  for (const [key, value] of Object.entries(out)) {
    const field = shape[key] ? innerType(shape[key]) : undefined;
    if (field instanceof z.ZodEnum) out[key] = canonicalOption(field, value);
    else if (field instanceof z.ZodArray && Array.isArray(value)) {
      const element = innerType(field.element as z.ZodType);
      if (element instanceof z.ZodEnum) out[key] = value.map((item) => canonicalOption(element, item));
    }
  }
  return out;
}
