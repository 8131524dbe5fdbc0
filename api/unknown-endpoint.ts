import { withoutApiKeysInUrl } from '../core/auth/index.js';
import { endpointCatalogue } from '../core/companies/endpoint-catalogue.js';
import { AppError } from '../core/errors/index.js';

// unknown_endpoint worded for a developer making first calls: what was asked, echoed, and what
// there is to ask instead. The paths come from the endpoint catalogue, so they cannot drift.

// A path may be as long as a URL: its start is enough to recognise it.
const ECHOED_PATH = 100;

const [first, ...rest] = endpointCatalogue.map((e) => e.path);
// "/companies/{fiscalCode}/report, …/credit-report": each path after the first shortened to what
// differs from the one before it, so the sentence stays one line.
const shortened = rest.map((path, i) => {
  const before = i === 0 ? first! : rest[i - 1]!;
  const stem = path.slice(0, path.lastIndexOf('/'));
  return before.startsWith(`${stem}/`) ? `…${path.slice(stem.length)}` : path;
});
const endpointsSentence = `The API answers GET ${[first, ...shortened].join(', ')}; reference at /docs.`;

/** A path as the caller sent it: any key-shaped text redacted, a long one cut short. */
function shown(path: string): string {
  const redacted = withoutApiKeysInUrl(path);
  return redacted.length > ECHOED_PATH ? `${redacted.slice(0, ECHOED_PATH)}…` : redacted;
}

/**
 * A path the API does not have (404 `unknown_endpoint`). `exists` asks whether a path is a GET
 * route, so a path that differs from one only by a trailing slash or its case says which to send.
 */
export function unknownPath(method: string, path: string, exists: (path: string) => boolean): AppError {
  const candidates = [withoutTrailingSlashes(path), path.toLowerCase(), withoutTrailingSlashes(path.toLowerCase())];
  const meant = candidates.find((candidate) => candidate !== path && candidate !== '' && exists(candidate));
  const hint = meant === undefined ? '' : ` Paths are lower case, with no trailing slash: send GET ${shown(meant)}.`;
  return new AppError('unknown_endpoint', `No endpoint ${method} ${shown(path)}.${hint} ${endpointsSentence}`);
}

/** The path without the slashes that end it. Not `replace(/\/+$/, '')`: on a path of many
 * slashes not at its end, that pattern is tried from each slash in turn, time growing with the
 * square of their number (16,000 slashes, which fit a request line, took half a second a try),
 * and this runs for any unknown path, before any key is checked. */
function withoutTrailingSlashes(path: string): string {
  let end = path.length;
  while (end > 0 && path.charCodeAt(end - 1) === 0x2f) end--;
  return path.slice(0, end);
}

/**
 * A path asked with a method it does not answer: 405 `unknown_endpoint` with `Allow` (decisions.md).
 * The company endpoints answer GET only; the other paths (/openapi.json, /docs, /healthz …) HEAD too.
 */
export const wrongMethod = (method: string, path: string, allow: readonly ('GET' | 'HEAD')[] = ['GET']) =>
  new AppError('unknown_endpoint', `${method} ${shown(path)}: this path only answers ${allow.join(' and ')} (the API is read-only; reference at /docs).`, { allow });
