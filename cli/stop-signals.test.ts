import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';

// A process that listens as `npm start` does and whose `again` never finishes (npm start's
// quit waiting for an embedded server still being made), signalled as a person would.
const LISTENER = `
import { listenForStopSignals } from './cli/stop-signals.ts';
listenForStopSignals({
  first: (s) => console.log('first ' + s),
  again: (s) => console.log('again ' + s),
});
console.log('ready');
setInterval(() => {}, 1000);
`;

async function signalled(gapsMs: number[]): Promise<{ lines: string[]; code: number | null; signal: NodeJS.Signals | null }> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', LISTENER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  while (!out.includes('ready')) await new Promise((resolve) => setTimeout(resolve, 20));
  for (const gap of gapsMs) {
    child.kill('SIGINT');
    await new Promise((resolve) => setTimeout(resolve, gap));
  }
  const timer = setTimeout(() => child.kill('SIGKILL'), 2_000);
  const [code, signal] = await exited;
  clearTimeout(timer);
  return { lines: out.trim().split('\n').slice(1), code, signal };
}

describe('stop signals', () => {
  it('when Ctrl-C comes twice at once (the terminal and npm) then it is one; a later one is the second; one more after that ends the process by the signal, whatever the second waits for', async () => {
    const run = await signalled([5, 600, 600, 100]);
    expect(run.lines).toEqual(['first SIGINT', 'again SIGINT']);
    expect(run.signal).toBe('SIGINT');
  }, 20_000);

  it('when the second Ctrl-C comes twice at once then the copy does not end the process', async () => {
    // SIGKILL after 2 s: still alive after the copy of the second.
    const run = await signalled([600, 5, 300]);
    expect(run.lines).toEqual(['first SIGINT', 'again SIGINT']);
    expect(run.signal).toBe('SIGKILL');
  }, 20_000);
});
