import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { configVariables } from '../core/config/index.js';

// No Docker engine runs here, so the compose file is checked statically: our services may only
// set variables the config schema knows (a typo would be silently ignored at start-up), and
// every command must start a compiled entry point whose TypeScript source exists.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[] | string;
  environment?: Record<string, string | number | boolean | null> | string[];
  healthcheck?: { test?: unknown };
  depends_on?: Record<string, { condition: string }> | string[];
}
const compose = parse(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, ComposeService> };
const services = compose.services;
// Our own services are the ones built from this repository's Dockerfile.
const ours = Object.entries(services).filter(([, s]) => s.build !== undefined);

function environmentNames(service: ComposeService): string[] {
  const env = service.environment ?? {};
  return Array.isArray(env) ? env.map((e) => e.split('=')[0]!) : Object.keys(env);
}

/** dist/api/main.js -> api/main.ts (tsconfig.build.json compiles the repository root into dist/). */
function sourceOf(entryPoint: string): string {
  return entryPoint.replace(/^dist\//, '').replace(/\.js$/, '.ts');
}

function entryPoints(command: string[] | string | undefined): string[] {
  const words = Array.isArray(command) ? command : (command ?? '').split(/\s+/);
  return words.filter((w) => /^dist\/.+\.js$/.test(w));
}

describe('docker-compose.yml', () => {
  it('when parsed, then it has every service the production-like run needs', () => {
    expect(Object.keys(services).sort()).toEqual(['api', 'billing-worker', 'dashboard', 'gateway', 'kafka', 'mcp', 'migrate', 'postgres', 'redis']);
    expect(ours.map(([name]) => name).sort()).toEqual(['api', 'billing-worker', 'dashboard', 'mcp', 'migrate']);
  });

  it.each(ours)('when %s sets environment variables, then each is one the config schema knows', (_name, service) => {
    const known = new Set<string>(configVariables);
    const names = environmentNames(service);
    expect(names.length).toBeGreaterThan(0);
    expect(names.filter((n) => !known.has(n))).toEqual([]);
  });

  it.each(ours)('when %s runs its command, then the compiled entry point has a TypeScript source', (name, service) => {
    const entries = entryPoints(service.command);
    expect(entries, `${name} must run a dist/... .js entry point`).toHaveLength(1);
    const missing = entries.map(sourceOf).filter((source) => !existsSync(path.join(root, source)));
    expect(missing, `${name} runs ${entries.join(', ')}, but its source ${missing.join(', ')} does not exist yet`).toEqual([]);
  });

  it('when the Dockerfile names a default command, then its entry point has a source too', () => {
    const cmd = /^CMD\s+(\[.*\])\s*$/m.exec(readFileSync(path.join(root, 'Dockerfile'), 'utf8'));
    expect(cmd).not.toBeNull();
    const entries = entryPoints(JSON.parse(cmd![1]!) as string[]);
    expect(entries).toHaveLength(1);
    const source = sourceOf(entries[0]!);
    expect(existsSync(path.join(root, source)), `Dockerfile CMD runs ${entries[0]}, but ${source} does not exist yet`).toBe(true);
  });

  it('when services depend on each other, then every dependency exists and every long-running infrastructure service has a health check', () => {
    for (const [name, service] of Object.entries(services)) {
      const deps = Array.isArray(service.depends_on) ? service.depends_on : Object.keys(service.depends_on ?? {});
      for (const dep of deps) expect(services[dep], `${name} depends on unknown service ${dep}`).toBeDefined();
      for (const [dep, rule] of Object.entries(Array.isArray(service.depends_on) ? {} : (service.depends_on ?? {}))) {
        // Waiting for "healthy" only works when the dependency defines how to tell.
        if (rule.condition === 'service_healthy') expect(services[dep]?.healthcheck?.test, `${dep} needs a healthcheck`).toBeDefined();
      }
    }
    for (const name of ['postgres', 'kafka', 'redis', 'api', 'mcp', 'billing-worker']) expect(services[name]?.healthcheck?.test, `${name} has no healthcheck`).toBeDefined();
    expect(services.api?.depends_on).toMatchObject({ migrate: { condition: 'service_completed_successfully' } });
  });

  it('when the API and the tool server are scaled out, then the gateway alone publishes their ports and proxies to every replica by name', () => {
    for (const [name, port] of [['api', '3000'], ['mcp', '3001']] as const) {
      const service = services[name] as ComposeService & { ports?: unknown; deploy?: { replicas?: number } };
      // A host port on a replicated service would clash between its replicas.
      expect(service.ports, name).toBeUndefined();
      expect(service.deploy?.replicas, name).toBeGreaterThanOrEqual(2);
      expect((services.gateway as { ports?: string[] }).ports).toContain(`${port}:${port}`);
    }
    const conf = readFileSync(path.join(root, 'deploy/nginx.conf'), 'utf8');
    expect(conf).toMatch(/listen 3000;[\s\S]*set \$api api:3000;[\s\S]*proxy_pass http:\/\/\$api;/);
    // A GET sent on to a second replica after the first received it could be charged twice.
    expect(conf).toMatch(/^\s*proxy_next_upstream off;/m);
    expect(conf).toMatch(/listen 3001;[\s\S]*set \$mcp mcp:3001;[\s\S]*proxy_pass http:\/\/\$mcp;/);
    expect((services.gateway as { volumes?: string[] }).volumes).toContain('./deploy/nginx.conf:/etc/nginx/nginx.conf:ro');
  });

  it('when the app services start, then they leave migrations to the migrate job', () => {
    for (const [name, service] of ours) {
      const env = service.environment as Record<string, string>;
      expect(env.MIGRATE_ON_START, name).toBe('false');
      expect(env.DATABASE_URL, name).toMatch(/@postgres:5432\//);
      expect(env.KAFKA_BROKERS, name).toBe('kafka:9092');
    }
    expect(services.migrate?.command).toEqual(['node', 'dist/cli/main.js', 'migrate', 'up']);
  });

  it('when a CLI command runs in any app service (docker compose exec api …), then it knows the public addresses, as the services do', () => {
    // Without them, `operator reset-link` in the api container printed http://0.0.0.0:3002/….
    for (const [name, service] of ours) {
      const env = service.environment as Record<string, string>;
      expect([env.PUBLIC_BASE_URL, env.PUBLIC_MCP_URL, env.PUBLIC_DASHBOARD_URL], name).toEqual(['http://localhost:3000', 'http://localhost:3001', 'http://localhost:3002']);
    }
  });
});
