import { afterAll, describe, expect, inject, it } from 'vitest';
import { composeApi } from '../api/compose.js';
import { parseConfig } from '../core/config/index.js';
import { openDatabase } from '../core/db/index.js';
import { createLogger } from '../core/logging/index.js';
import { listen } from './api-fixtures.js';

// Which tool server address the getting-started guide the API serves names in its MCP command
// (§9), from the API's configuration as composed for `npm start` and api/main.ts.

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** The guide the API composed from `env` serves, in a language, as Markdown. */
async function servedGuide(env: Record<string, string>, language: 'en' | 'it' = 'en'): Promise<string> {
  const logger = createLogger({ level: 'silent' });
  const config = parseConfig({ DATABASE_URL: inject('databaseUrl'), LOG_LEVEL: 'silent', ...env });
  const database = await openDatabase(config, logger, 'guide-addresses-test');
  cleanups.push(() => database.close());
  const api = await composeApi({ config, logger, database });
  cleanups.push(() => api.close());
  const server = await listen(api.app);
  cleanups.push(() => server.close());
  return (await fetch(`${server.url}/docs/getting-started?format=md&lang=${language}`)).text();
}

const exported = (markdown: string, name: string) => new RegExp(`^export ${name}='([^']*)'`, 'm').exec(markdown)?.[1];
const servedMcpExport = async (env: Record<string, string>) => exported(await servedGuide(env), 'MCP_URL');

describe('the MCP command of the guide the API serves', () => {
  it('when the API is a local start (no public addresses) then it names the tool server on this host and MCP_PORT', async () => {
    expect(await servedMcpExport({ MCP_PORT: '4999' })).toBe('http://127.0.0.1:4999');
  });

  it('when PUBLIC_MCP_URL is set then it names that, in both languages', async () => {
    for (const language of ['en', 'it'] as const) {
      const guide = await servedGuide({ PUBLIC_BASE_URL: 'https://api.example.com', PUBLIC_MCP_URL: 'https://mcp.example.com' }, language);
      expect(exported(guide, 'MCP_URL'), language).toBe('https://mcp.example.com');
    }
  });

  it('when only the API\'s public address is set then it names no tool server address (neither this host\'s nor a guess): a placeholder, the text saying the account manager gives it, in both languages', async () => {
    const guides = { en: await servedGuide({ PUBLIC_BASE_URL: 'https://api.example.com' }, 'en'), it: await servedGuide({ PUBLIC_BASE_URL: 'https://api.example.com' }, 'it') };
    expect(exported(guides.en, 'MCP_URL')).toBe('<the tool server address your account manager gives you>');
    expect(guides.en).toContain('your account manager gives you');
    expect(exported(guides.it, 'MCP_URL')).toBe('<indirizzo del server MCP dato dal tuo account manager>');
    expect(guides.it).toContain('te lo dà il tuo account');
    for (const guide of Object.values(guides)) {
      expect(guide).not.toContain('127.0.0.1');
      expect(exported(guide, 'BASE_URL')).toBe('https://api.example.com');
    }
  });

  it('when the API listens everywhere (HOST 0.0.0.0 or ::, as in a container) then the guide names 127.0.0.1, for the API and the tool server, which a client can open', async () => {
    for (const host of ['0.0.0.0', '::']) {
      for (const language of ['en', 'it'] as const) {
        const guide = await servedGuide({ HOST: host, API_PORT: '4997', MCP_PORT: '4998' }, language);
        expect(exported(guide, 'MCP_URL'), `${host} ${language}`).toBe('http://127.0.0.1:4998');
        expect(exported(guide, 'BASE_URL'), `${host} ${language}`).toBe('http://127.0.0.1:4997');
        expect(guide, `${host} ${language}`).not.toMatch(/0\.0\.0\.0|http:\/\/::|\[::\]/);
      }
    }
  });
});
