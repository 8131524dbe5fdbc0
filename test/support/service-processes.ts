import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// The API and the tool server run alone, as production runs them: their own main.ts in a
// process of their own, configured by environment variables only.
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export const serviceEntries = {
  api: { entry: 'api/main.ts', listening: 'API listening' },
  mcp: { entry: 'mcp/main.ts', listening: 'tool server listening' },
} as const;

export type ServiceEntry = (typeof serviceEntries)[keyof typeof serviceEntries];

export interface RunningService {
  child: ChildProcess;
  baseUrl: string;
  /** Its JSON log lines so far. */
  lines(): { msg?: string; level?: string }[];
}

/**
 * `service` on a free port of 127.0.0.1, without Redis unless `env` names one; resolves with its
 * base URL once it logs that it listens. The child is pushed onto `running` for the caller to
 * end (killChildren).
 */
export function startServiceProcess(service: ServiceEntry, env: Record<string, string>, running: ChildProcess[]): Promise<RunningService> {
  const child = spawn(process.execPath, ['--import', 'tsx', service.entry], {
    cwd: repoRoot,
    env: { ...process.env, REDIS_URL: '', HOST: '127.0.0.1', LOG_LEVEL: 'info', API_PORT: '0', MCP_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.push(child);
  return new Promise((resolve, reject) => {
    let output = '';
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
      for (const line of output.split('\n')) {
        if (!line.includes(service.listening)) continue;
        const entry = JSON.parse(line) as { port?: number; url?: string };
        resolve({ child, baseUrl: entry.url ? new URL(entry.url).origin : `http://127.0.0.1:${entry.port}`, lines: () => jsonLines(output) });
      }
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`${service.entry} exited with ${code}:\n${output.slice(-2000)}`)));
  });
}

function jsonLines(output: string): { msg?: string; level?: string }[] {
  return output.split('\n').flatMap((line) => {
    try {
      return [JSON.parse(line) as { msg?: string; level?: string }];
    } catch {
      return [];
    }
  });
}
