import { causeChain } from '../errors/index.js';

/** Why a consumer stopped for good; `cause` is the error that stopped it. */
export class UsageConsumerFailure extends Error {
  override name = 'UsageConsumerFailure';
}

/**
 * A fault in the code rather than in what it talks to: the same batch meets it again however
 * often it is retried. kafkajs's own list (retry/index.js: these are never retried).
 */
export function isCodeFault(err: unknown): boolean {
  const name = (err as { name?: unknown } | null)?.name;
  return name === 'TypeError' || name === 'RangeError' || name === 'ReferenceError' || name === 'SyntaxError';
}

/** The error at the end of `err`'s cause chain (kafkajs wraps what eachBatch threw). */
export function rootCause(err: unknown): unknown {
  return causeChain(err).at(-1);
}

/** An error as `Name: message`, for the one line that says why consuming ended. */
export function describeError(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
