import { z } from 'zod';
import { errorCodes } from './catalogue.js';
import { AppError, isAppError } from './app-error.js';

export const requestIdSchema = z.string().regex(/^req_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);

export const errorObjectSchema = z.object({
  code: z.enum(errorCodes),
  message: z.string(),
  requestId: requestIdSchema,
  details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
});
export const errorEnvelopeSchema = z.object({ error: errorObjectSchema });
export type ErrorObject = z.infer<typeof errorObjectSchema>;

/**
 * Turns anything thrown into the safe error object both edges send. Unknown errors become
 * internal_error with the catalogue's message: no stack, SQL or driver text ever leaves.
 */
export function toErrorObject(err: unknown, requestId: string): { error: ErrorObject; appError: AppError } {
  const appError = isAppError(err) ? err : new AppError('internal_error');
  const error: ErrorObject = { code: appError.code, message: appError.message, requestId };
  if (appError.details && appError.details.length > 0) error.details = appError.details;
  return { error, appError };
}
