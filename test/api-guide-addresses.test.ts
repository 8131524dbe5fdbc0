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

async function servedMcpExport(env: Record<string, string>): Promise<string | undefined> {
  const logger = createLogger({ level: 'silent' });
  const config = parseConfig({ DATABASE_URL: inject('databaseUrl'), LOG_LEVEL: 'silent', ...env });
  const database = await openDatabase(config, logger, 'guide-addresses-test');
  cleanups.push(() => database.close());
  const api = await composeApi({ config, logger, database });
  cleanups.push(() => api.close());
  const server = await listen(api.app);
  cleanups.push(() => server.close());
  const markdown = await (await fetch(`${server.url}/docs/getting-started?format=md`)).text();
  return /^export MCP_URL='([^']*)'/m.exec(markdown)?.[1];
}

describe('the MCP command of the guide the API serves', () => {
  it('when the API is a local start (no public addresses) then it names the tool server on this host and MCP_PORT', async () => {
    expect(await servedMcpExport({ MCP_PORT: '4999' })).toBe('http://127.0.0.1:4999');
  });

  it('when PUBLIC_MCP_URL is set then it names that', async () => {
    expect(await servedMcpExport({ PUBLIC_BASE_URL: 'https://api.example.com', PUBLIC_MCP_URL: 'https://mcp.example.com' })).toBe('https://mcp.example.com');
  });

  it('when only the API\'s public address is set then it keeps the local address, which the text says production replaces (no guess at a deployed tool server)', async () => {
    expect(await servedMcpExport({ PUBLIC_BASE_URL: 'https://api.example.com' })).toBe('http://127.0.0.1:3001');
  });
});
