import type { z } from 'zod';
import { issueDetails, type ErrorDetail } from '../core/errors/index.js';

/**
 * The details of a tool's invalid arguments: one per problem, `path` the argument's path. zod
 * reports unknown keys as one issue on the object that holds them ("Unrecognized keys: …", path
 * empty for the arguments themselves); here each unknown key is its own detail with its own path,
 * and the message names the arguments the tool takes, so the model can correct the call.
 */
export function argumentDetails(issues: readonly z.core.$ZodIssue[], inputSchema: z.ZodObject): ErrorDetail[] {
  return issues.flatMap((issue) => {
    if (issue.code !== 'unrecognized_keys') return issueDetails([issue], '(arguments)');
    const message = issue.path.length === 0 ? `not an argument of this tool, which takes ${Object.keys(inputSchema.shape).join(', ')}` : 'not a known field';
    return issue.keys.map((key) => ({ path: [...issue.path, key].map(String).join('.'), message }));
  });
}
