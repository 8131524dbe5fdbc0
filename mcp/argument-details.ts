import type { z } from 'zod';
import { issueDetails, type ErrorDetail } from '../core/errors/index.js';

/**
 * The details of a tool's invalid arguments: one per problem, `path` the argument's path. zod
 * reports unknown keys as one issue on the object that holds them ("Unrecognized keys: …", path
 * empty for the arguments themselves); here each unknown key is its own detail with its own path,
 * and the message names the arguments the tool takes, so the model can correct the call, and
 * what to do instead where the tool's unknownArgumentHint knows what the name was looking for.
 */
export function argumentDetails(
  issues: readonly z.core.$ZodIssue[],
  inputSchema: z.ZodObject,
  args: unknown,
  unknownArgumentHint: (name: string) => string | undefined = () => undefined,
): ErrorDetail[] {
  return withoutEchoes(issues).flatMap((issue) => {
    // An argument left out (or null, as strict function calling sends one left out): said so, not
    // as zod words it ("Invalid input: expected string, received undefined"), which a model may
    // take for a wrong value. A null inside a list (slugs: [null]) is a wrong value: said as zod says it.
    if (issue.code === 'invalid_type' && issue.path.length === 1 && argument(args, issue.path[0]!) == null) {
      return issueDetails([{ path: issue.path, message: `required: ${article(issue.expected)} ${issue.expected}` }], '(arguments)');
    }
    // JSON's 1e400 is read as Infinity, which zod names as if it had been sent.
    if (issue.code === 'invalid_type' && issue.expected === 'number' && isInfinite(valueAt(args, issue.path))) {
      return issueDetails([{ path: issue.path, message: 'a number too large to hold (read as infinite)' }], '(arguments)');
    }
    if (issue.code !== 'unrecognized_keys') return issueDetails([issue], '(arguments)');
    const takes = `not an argument of this tool, which takes ${Object.keys(inputSchema.shape).join(', ')}`;
    return issue.keys.map((key) => {
      const hint = issue.path.length === 0 ? unknownArgumentHint(key) : undefined;
      const message = issue.path.length > 0 ? 'not a known field' : hint === undefined ? takes : `${takes}; ${hint}`;
      return { path: [...issue.path, key].map(String).join('.'), message };
    });
  });
}

const isInfinite = (value: unknown) => value === Infinity || value === -Infinity;
const valueAt = (args: unknown, path: readonly PropertyKey[]): unknown => path.reduce<unknown>((value, key) => argument(value, key), args);

function argument(args: unknown, key: PropertyKey): unknown {
  return args !== null && typeof args === 'object' && Object.hasOwn(args, key) ? (args as Record<PropertyKey, unknown>)[key] : undefined;
}

const article = (type: string) => (/^[aeiou]/.test(type) ? 'an' : 'a');

const pathKey = (issue: z.core.$ZodIssue) => JSON.stringify(issue.path);
const isBound = (issue: z.core.$ZodIssue) => issue.code === 'too_big' || issue.code === 'too_small';
// zod's own bound on every integer, the largest a double holds exactly, said beside the schema's.
const isSafeIntegerBound = (issue: z.core.$ZodIssue) =>
  (issue.code === 'too_big' && Number(issue.maximum) === Number.MAX_SAFE_INTEGER) || (issue.code === 'too_small' && Number(issue.minimum) === Number.MIN_SAFE_INTEGER);

/**
 * The issues that say something of their own. zod goes on checking a value of the wrong type
 * (["rossi"] for a string argument was also "Too small: expected array to have >=2 items"), and
 * checks an integer against the largest a double holds beside the schema's bound (1e20 for a limit
 * of at most 50 was also "Too big: expected int to be <=9007199254740991"): one detail per path
 * says what the argument must be.
 */
function withoutEchoes(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue[] {
  const wrongType = new Set(issues.filter((issue) => issue.code === 'invalid_type').map(pathKey));
  return issues.filter((issue) => {
    if (issue.code !== 'invalid_type' && wrongType.has(pathKey(issue))) return false;
    return !(isSafeIntegerBound(issue) && issues.some((other) => other !== issue && isBound(other) && !isSafeIntegerBound(other) && pathKey(other) === pathKey(issue)));
  });
}
