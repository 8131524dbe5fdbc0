import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { PreparedEntry } from './prepare-line.js';

// Parser threads for the importer: the main thread reads lines, or blocks of bytes, and ships
// them in chunks; each thread answers with the chunk's prepared companies (compact: mostly
// strings, cheap to copy back) and rejections. Answers are awaited in the order the chunks were sent, so batches and
// rejections come out exactly as on the main thread.

/** Consecutive lines from firstLine on: as text, or a block's bytes (see line-blocks.ts). */
export type ParseInput = { firstLine: number; lines: string[] } | { firstLine: number; bytes: Uint8Array };
export type ParseRequest = ParseInput & { id: number };
export type ParseReply = { id: number; entries: PreparedEntry[]; error?: undefined } | { id: number; error: string };

export interface ParsePool {
  readonly size: number;
  /** Resolves with the entries of the input's non-blank lines. */
  parse(input: ParseInput): Promise<PreparedEntry[]>;
  close(): Promise<void>;
}

export interface StartParsePoolOptions {
  size: number;
  /** The worker entry; by default parse-worker beside this module (.ts under tsx, .js when built). */
  entry?: URL;
  /** Node options of the threads; by default the process's own (so `--import tsx` carries over). */
  execArgv?: string[];
  /** How long a thread may take to load before the pool gives up on threads. */
  readyTimeoutMs?: number;
}

export type StartParsePoolResult = { ok: true; pool: ParsePool } | { ok: false; reason: string };

// Under tsx or vitest this module is a .ts file and so is its worker; built, both are .js.
function defaultEntry(): URL {
  const here = import.meta.url;
  return new URL(here.endsWith('.ts') ? './parse-worker.ts' : './parse-worker.js', here);
}

// Node 20 does not apply the parent's `--import tsx` hooks to a worker thread (and vitest's
// transform never reaches one), so a .ts entry is loaded by a small bootstrap that registers
// tsx in the thread first. Only in development: built, the entry is plain .js.
function workerScript(entry: URL): { script: string | URL; eval: boolean } {
  if (!entry.pathname.endsWith('.ts')) return { script: entry, eval: false };
  // The ESM build of tsx's API (its CommonJS one cannot register from an ESM-only thread);
  // require.resolve finds the CommonJS file next to it.
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
  const script = `import(${JSON.stringify(tsx)}).then((api) => { (api.register ?? api.default.register)(); `
    + `return import(${JSON.stringify(entry.href)}); })`;
  return { script, eval: true };
}

// More room than V8 gives a thread by default: a thread holds the chunk it is working on (a
// megabyte of text and its parsed objects) across several scavenges, each of which copies
// what is alive; with more room there are fewer. Measured: ~8% less Node CPU per company in
// `npm run bench:import` (alternating runs with and without, 22 Nov 2026).
const YOUNG_GENERATION_MB = 96;

interface Pending {
  resolve(entries: PreparedEntry[]): void;
  reject(err: Error): void;
}

/**
 * Starts `size` parser threads and waits until each has loaded its code. When they cannot
 * load (e.g. a .ts entry in a process without a TypeScript loader, as inside vitest, where
 * only the test process is transformed) the answer says why and the caller parses in-thread.
 */
export async function startParsePool(options: StartParsePoolOptions): Promise<StartParsePoolResult> {
  let script: ReturnType<typeof workerScript>;
  try {
    script = workerScript(options.entry ?? defaultEntry());
  } catch (err) {
    return { ok: false, reason: `no TypeScript loader for the parser threads: ${(err as Error).message.split('\n')[0]}` };
  }
  const workers: Worker[] = [];
  const pending: Map<number, Pending>[] = [];
  let failure: Error | null = null;
  let closing = false;

  const fail = (err: Error) => {
    if (failure === null) failure = err;
    for (const map of pending) {
      for (const p of map.values()) p.reject(failure);
      map.clear();
    }
  };

  const ready = Array.from({ length: Math.max(1, options.size) }, (_, index) => {
    const worker = new Worker(script.script, {
      eval: script.eval,
      execArgv: options.execArgv ?? process.execArgv,
      name: `import-parser-${index + 1}`,
      resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
    });
    const map = new Map<number, Pending>();
    workers.push(worker);
    pending.push(map);
    return new Promise<void>((resolve, reject) => {
      let loaded = false;
      const timer = setTimeout(() => reject(new Error(`parser thread did not start within ${options.readyTimeoutMs ?? 30_000} ms`)), options.readyTimeoutMs ?? 30_000);
      worker.on('message', (reply: ParseReply | { ready: true }) => {
        if ('ready' in reply) {
          loaded = true;
          clearTimeout(timer);
          resolve();
          return;
        }
        const p = map.get(reply.id);
        if (p === undefined) return;
        map.delete(reply.id);
        if (reply.error !== undefined) p.reject(new Error(`parser thread failed: ${reply.error}`));
        else p.resolve(reply.entries);
      });
      worker.on('error', (err) => {
        clearTimeout(timer);
        if (!loaded) reject(err);
        else fail(err);
      });
      worker.on('exit', (code) => {
        clearTimeout(timer);
        const err = new Error(`parser thread exited with code ${code}`);
        if (!loaded) reject(err);
        else if (!closing) fail(err);
      });
    });
  });

  const settled = await Promise.allSettled(ready);
  const notLoaded = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (notLoaded) {
    closing = true;
    await Promise.all(workers.map((w) => w.terminate()));
    const reason = notLoaded.reason instanceof Error ? notLoaded.reason.message : String(notLoaded.reason);
    return { ok: false, reason: reason.split('\n')[0]! };
  }

  let nextId = 0;
  return {
    ok: true,
    pool: {
      size: workers.length,
      parse(input) {
        if (failure !== null) return Promise.reject(failure);
        // The least busy thread: chunks vary in size and threads share the CPUs with others.
        let index = 0;
        for (let i = 1; i < pending.length; i++) if (pending[i]!.size < pending[index]!.size) index = i;
        const id = nextId++;
        return new Promise<PreparedEntry[]>((resolve, reject) => {
          pending[index]!.set(id, { resolve, reject });
          workers[index]!.postMessage({ ...input, id } satisfies ParseRequest);
        });
      },
      async close() {
        closing = true;
        await Promise.all(workers.map((w) => w.terminate()));
        fail(new Error('parser threads closed'));
      },
    },
  };
}
