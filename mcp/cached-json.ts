/** The JSON text the company cache made when it loaded a value (`CompanyCache.serialised`). */
export type CachedText = (value: unknown) => string | undefined;

/**
 * `JSON.stringify(value)`, byte for byte, except that an object whose text the company cache
 * already holds is spliced in instead of being walked again. Only the outer `depth` levels of
 * plain objects are visited key by key (that is where a tool result or a JSON-RPC response
 * holds cached data); anything deeper, arrays and anything unusual (toJSON, class instances)
 * go to JSON.stringify whole.
 *
 * Why: a profile tool call used to serialise the same cached profile twice (the text copy, then
 * the JSON-RPC response), which was a visible share of its CPU under load.
 */
export function jsonWithCachedParts(value: unknown, cachedText: CachedText | undefined, depth: number): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const cached = cachedText?.(value);
  if (cached !== undefined) return cached;
  const proto = Object.getPrototypeOf(value) as unknown;
  if (depth <= 0 || Array.isArray(value) || (proto !== Object.prototype && proto !== null) || typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return JSON.stringify(value);
  }
  let text = '{';
  for (const key of Object.keys(value)) {
    const child = (value as Record<string, unknown>)[key];
    // Skipped exactly as JSON.stringify skips them in an object.
    if (child === undefined || typeof child === 'function' || typeof child === 'symbol') continue;
    text += `${text.length > 1 ? ',' : ''}${JSON.stringify(key)}:${jsonWithCachedParts(child, cachedText, depth - 1)}`;
  }
  return `${text}}`;
}
