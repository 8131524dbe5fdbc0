import type { z } from 'zod';
import { errorCatalogue, type ErrorCode } from './catalogue.js';

export interface ErrorDetail {
  /** Where the failure is, e.g. `path.fiscalCode`. */
  path: string;
  message: string;
}

export interface AppErrorOptions {
  details?: ErrorDetail[];
  /** Whole seconds; sent as Retry-After by the HTTP mapper. */
  retryAfterSeconds?: number;
  /** Extra response headers for the HTTP edge (e.g. RateLimit-*); ignored by MCP. */
  headers?: Record<string, string>;
  /**
   * The methods a path does allow, for `unknown_endpoint` on a path that exists: the answer is
   * then 405 with an `Allow` header (decisions.md: "405 for non-GET methods on the four paths
   * (use `unknown_endpoint`)"); an unknown path keeps the catalogue's 404.
   */
  allow?: readonly string[];
  /** The zod issues behind `details`, for an edge that words them in its reader's language
   * (the dashboard). Never sent: the envelope carries `details`. */
  issues?: readonly z.core.$ZodIssue[];
  cause?: unknown;
}

/**
 * The only error domain code throws on purpose. Its message is written for the caller and is
 * always safe to show; anything else that reaches an edge mapper becomes internal_error.
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: ErrorDetail[] | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly headers: Record<string, string> | undefined;
  readonly issues: readonly z.core.$ZodIssue[] | undefined;
  readonly expose = true;

  constructor(code: ErrorCode, message?: string, options: AppErrorOptions = {}) {
    super(message ?? errorCatalogue[code].message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = code === 'unknown_endpoint' && options.allow ? 405 : errorCatalogue[code].status;
    this.details = options.details;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.headers = code === 'unknown_endpoint' && options.allow ? { ...options.headers, Allow: options.allow.join(', ') } : options.headers;
    this.issues = options.issues;
  }
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
