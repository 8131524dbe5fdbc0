import type { z } from 'zod';
import { AppError, type ErrorDetail } from './app-error.js';

/** Zod issues as the envelope's `details`: each field's path in dots, or `whole` when the issue is about the input itself. */
export function issueDetails(issues: readonly { path: readonly PropertyKey[]; message: string }[], whole = '(input)'): ErrorDetail[] {
  return issues.map((issue) => ({ path: issue.path.length > 0 ? issue.path.map(String).join('.') : whole, message: issue.message }));
}

/**
 * Parses what a person or a caller handed to a core function (a CLI option, a dashboard form, an
 * operator's plan) against its schema. A mismatch is the catalogue's `invalid_params`, with one
 * detail per problem and a message that names them, so every edge (CLI, dashboard, API) shows
 * it as it shows any other input error, not as a raw ZodError or an internal_error.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const details = issueDetails(result.error.issues);
  throw new AppError('invalid_params', details.map((d) => `${d.path}: ${d.message}`).join('; '), { details, issues: result.error.issues });
}
