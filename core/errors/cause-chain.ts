/**
 * `err` and what caused it, outermost first, following `cause` (kafkajs wraps a socket's failure
 * in "retries exceeded", and that in a crash). At most ten: a chain that loops must end.
 */
export function causeChain(err: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e = err; e !== undefined && e !== null && chain.length < 10; e = (e as { cause?: unknown }).cause) chain.push(e);
  return chain;
}
