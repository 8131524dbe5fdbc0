import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { freePort } from '../services/free-port.js';

// The gateway of docker-compose.yml (deploy/nginx.conf), run with Debian's nginx: with its
// Docker names and ports swapped for loopback ones, and nothing else changed, so what a client
// of the scaled deployment meets is tested.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const NGINX = '/usr/sbin/nginx';

export interface GatewayOptions {
  /** Where its prefix (config, logs) goes: the caller removes it. */
  dir: string;
  /** The API replicas, host:port each: one, or several behind an upstream group as DNS would give them. */
  apiUpstreams: string[];
  readTimeoutS?: number;
  workerConnections?: number;
}

export interface Gateway {
  /** The gateway's API address. */
  url: string;
  /** Its access log so far. */
  accessLog(): Promise<string>;
}

/** deploy/nginx.conf in front of `apiUpstreams`; pushed onto `running` for the caller to end (SIGQUIT). */
export async function startGateway(options: GatewayOptions, running: ChildProcess[]): Promise<Gateway> {
  const [apiPort, mcpPort] = [await freePort(), await freePort()];
  const prefix = await mkdtemp(path.join(options.dir, 'nginx-'));
  await mkdir(path.join(prefix, 'logs'));
  let conf = await readFile(path.join(root, 'deploy/nginx.conf'), 'utf8');
  const swap = (from: string, to: string) => {
    expect(conf, `deploy/nginx.conf no longer has "${from}"`).toContain(from);
    conf = conf.replace(from, to);
  };
  // No Docker DNS here: the upstreams are addresses (or a group of them), which need no resolver.
  swap('resolver 127.0.0.11 valid=10s ipv6=off;', options.apiUpstreams.length > 1 ? `upstream api_replicas { ${options.apiUpstreams.map((a) => `server ${a};`).join(' ')} }` : '');
  swap('listen 3000;', `listen 127.0.0.1:${apiPort};`);
  swap('listen 3001;', `listen 127.0.0.1:${mcpPort};`);
  swap('set $api api:3000;', `set $api ${options.apiUpstreams.length > 1 ? 'api_replicas' : options.apiUpstreams[0]};`);
  swap('set $mcp mcp:3001;', `set $mcp 127.0.0.1:${await freePort()};`);
  if (options.readTimeoutS) swap('proxy_read_timeout 30s;', `proxy_read_timeout ${options.readTimeoutS}s;`);
  if (options.workerConnections) swap('worker_connections 8192;', `worker_connections ${options.workerConnections};`);
  const accessLog = path.join(prefix, 'logs', 'access.log');
  swap('access_log /var/log/nginx/access.log gateway;', `access_log ${accessLog} gateway;`);
  conf = conf.replaceAll('include gateway-errors.conf;', `include ${path.join(root, 'deploy/gateway-errors.conf')};`);
  conf = `daemon off;\nmaster_process off;\npid ${path.join(prefix, 'nginx.pid')};\n${conf}`;
  await writeFile(path.join(prefix, 'nginx.conf'), conf);
  const gateway = spawn(NGINX, ['-p', prefix, '-c', path.join(prefix, 'nginx.conf'), '-e', 'stderr'], { stdio: ['ignore', 'ignore', 'pipe'] });
  running.push(gateway);
  let stderr = '';
  gateway.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = `http://127.0.0.1:${apiPort}`;
  for (let i = 0; i < 100; i++) {
    if (gateway.exitCode !== null) throw new Error(`nginx exited: ${stderr}`);
    if (await fetch(`${url}/`).then(() => true, () => false)) return { url, accessLog: () => readFile(accessLog, 'utf8').catch(() => '') };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`nginx did not listen: ${stderr}`);
}
