import type { z } from 'zod';
import { issueDetails, type ErrorDetail } from '../core/errors/index.js';

/**
 * The details of a tool's invalid arguments: one per problem, `path` the argument's path. zod
 * reports unknown keys as one issue on the object that holds them ("Unrecognized keys: …", path
 * empty for the arguments themselves); here each unknown key is its own detail with its own path,
 * and the message names the arguments the tool takes, so the model can correct the call.
 */
export function argumentDetails(issues: readonly z.core.$ZodIssue[], inputSchema: z.ZodObject, args: unknown): ErrorDetail[] {
  return issues.flatMap((issue) => {
    // An argument left out (or null, as strict function calling sends one left out): said so, not
    // as zod words it ("Invalid input: expected string, received undefined"), which a model may
    // take for a wrong value. A null inside a list (slugs: [null]) is a wrong value: said as zod says it.
    if (issue.code === 'invalid_type' && issue.path.length === 1 && argument(args, issue.path[0]!) == null) {
      return issueDetails([{ path: issue.path, message: `required: ${article(issue.expected)} ${issue.expected}` }], '(arguments)');
    }
    if (issue.code !== 'unrecognized_keys') return issueDetails([issue], '(arguments)');
    const message = issue.path.length === 0 ? `not an argument of this tool, which takes ${Object.keys(inputSchema.shape).join(', ')}` : 'not a known field';
    return issue.keys.map((key) => ({ path: [...issue.path, key].map(String).join('.'), message }));
  });
}

function argument(args: unknown, key: PropertyKey): unknown {
  return args !== null && typeof args === 'object' && Object.hasOwn(args, key) ? (args as Record<PropertyKey, unknown>)[key] : undefined;
}

const article = (type: string) => (/^[aeiou]/.test(type) ? 'an' : 'a');
