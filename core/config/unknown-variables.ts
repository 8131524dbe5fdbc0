import { configVariables } from './config-schema.js';
import { editDistance } from '../text/index.js';

// The prefixes our variables start with, read off the schema's own names (API_, KAFKA_, REDIS_,
// …), so that a variable added to the schema is known here too. NODE_ is Node's (NODE_OPTIONS,
// NODE_EXTRA_CA_CERTS): NODE_ENV is the one of its variables we read.
const prefixes = [...new Set(configVariables.filter((name) => name.includes('_')).map((name) => name.slice(0, name.indexOf('_') + 1)))]
  .filter((prefix) => prefix !== 'NODE_');
const known = new Set<string>(configVariables);
// Two edits away at most: REDIS_URI, KAFKA_BROKER, REDIS_KEY_PREFX.
const CLOSE = 2;

/**
 * One warning for each variable of `env` that looks like one of ours (starts with one of our
 * prefixes) but is none: parseConfig ignores it, so a misspelt REDIS_URL would otherwise leave
 * rate limits counted in process with nothing said. Names only, never values (they may be secrets).
 */
export function unknownVariableWarnings(env: Record<string, string | undefined>): string[] {
  return Object.keys(env)
    .filter((name) => !known.has(name) && prefixes.some((prefix) => name.startsWith(prefix)))
    .sort()
    .map((name) => {
      const near = closest(name);
      return `${name} is not a setting of this service and is ignored${near ? `: did you mean ${near}?` : ''}`;
    });
}

// The one known name nearest to `name`, when it is close and no other is as close.
function closest(name: string): string | undefined {
  let best: string[] = [];
  let bestDistance = CLOSE + 1;
  for (const candidate of known) {
    const distance = editDistance(name, candidate);
    if (distance < bestDistance) [best, bestDistance] = [[candidate], distance];
    else if (distance === bestDistance) best.push(candidate);
  }
  return best.length === 1 ? best[0] : undefined;
}
