import { afterAll, describe, expect, inject, it } from 'vitest';
import { composeApi } from '../api/compose.js';
import { ConfigError, parseConfig } from '../core/config/index.js';
import { openDatabase } from '../core/db/index.js';
import { createLogger } from '../core/logging/index.js';
import { insertCompanies, listen, makeDossier } from './api-fixtures.js';

// Which companies the public OpenAPI document (/docs/openapi.json, no key) shows as examples,
// from the API's configuration as composed for `npm start` and api/main.ts: with real data the
// operator names companies whose data may be shown to anyone (OPENAPI_EXAMPLE_COMPANIES).

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

type Json = Record<string, any>;

/** The public document the API composed from `env` serves. */
async function publicDocument(env: Record<string, string>): Promise<Json> {
  const logger = createLogger({ level: 'silent' });
  const config = parseConfig({ DATABASE_URL: inject('databaseUrl'), LOG_LEVEL: 'silent', ...env });
  const database = await openDatabase(config, logger, 'openapi-examples-test');
  cleanups.push(() => database.close());
  const api = await composeApi({ config, logger, database });
  cleanups.push(() => api.close());
  const server = await listen(api.app);
  cleanups.push(() => server.close());
  return (await fetch(`${server.url}/docs/openapi.json`)).json() as Promise<Json>;
}

const reportExample = (document: Json) => document.paths['/companies/{fiscalCode}/report'].get.responses['200'].content['application/json'].example;

describe('the companies the public OpenAPI document shows as examples', () => {
  it('when OPENAPI_EXAMPLE_COMPANIES names one then every example is that company, whichever comes first in the store, and the profile has no large-company example but its own', async () => {
    const chosen = makeDossier({ legalName: 'Esempio Pubblicabile S.R.L.' });
    // Inserted after whatever the store holds: the first company with figures is another one.
    const seed = await openDatabase(parseConfig({ DATABASE_URL: inject('databaseUrl'), LOG_LEVEL: 'silent' }), createLogger({ level: 'silent' }), 'openapi-examples-seed');
    cleanups.push(() => seed.close());
    await insertCompanies(seed.db, [makeDossier(), chosen]);
    const document = await publicDocument({ OPENAPI_EXAMPLE_COMPANIES: ` ${chosen.fiscalCode.toLowerCase()} ` });
    expect(reportExample(document).data.identity).toMatchObject({ legalName: 'Esempio Pubblicabile S.R.L.', fiscalCode: chosen.fiscalCode });
    const profile = document.paths['/companies/{taxId}/profile'].get;
    expect(profile.parameters[0].example ?? profile.parameters[0].examples?.smallCompany?.value).toBe(chosen.fiscalCode);
    expect(JSON.stringify(profile.parameters[0])).not.toContain('largeCompany');
  });

  it('when it is not one or two fiscal codes then the service refuses to start, saying so', () => {
    for (const [value, message] of [
      ['12345', 'each must be a fiscal code'],
      ['12345678901,12345678902,12345678903', 'at most two'],
    ] as const) {
      let error: unknown;
      try {
        parseConfig({ OPENAPI_EXAMPLE_COMPANIES: value });
      } catch (err) {
        error = err;
      }
      expect(error, value).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems.join('\n'), value).toContain(message);
      expect((error as ConfigError).problems.join('\n'), value).toContain('OPENAPI_EXAMPLE_COMPANIES');
    }
  });
});
