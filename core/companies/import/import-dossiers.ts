import { MetricDefinitionConflict } from '../custom-metric-definitions.js';
import { databaseErrorParts, type Db } from '../../db/index.js';
import { linkUnlinkedHolders, upsertPreparedCompanies, type PreparedCompany, type UpsertResult } from '../write-companies.js';
import { checkMetricDefinitions, type CheckMetricDefinitions, type StoredMetricDefinition } from './check-metric-definitions.js';
import { trackInputDone } from './input-done.js';
import { blockLineBytes, blockLines, type LineBlock } from './line-blocks.js';
import { IDLE, markIdle, type Idle } from './mark-idle.js';
import type { ImportRejection, ParsedEntry } from './parse-dossier-line.js';
import { startParsePool, type ParseInput, type ParsePool } from './parse-pool.js';
import { prepareEntry, prepareLine, type PreparedEntry } from './prepare-line.js';

// Streams dossiers into the store in batches. Parsing and validation of the next batches runs
// while earlier ones are being written, and up to `writers` batches are written at once, each
// in its own transaction on its own connection (the database then uses more than one core).
// Two rules keep that equal to writing the batches one after the other:
// - a batch naming a fiscal code that a batch still in flight also names waits for it, so
//   the later line still wins;
// - holders are linked to companies by fiscal code at write time, and two concurrent
//   transactions do not see each other's rows (a parent and its subsidiary written side by
//   side would stay unlinked), so once batches have overlapped, the import ends by linking
//   every holder that names a stored company (linkUnlinkedHolders);
// - a line that describes a metric outside the catalogue otherwise than an earlier line or the
//   store is rejected before it is batched, in line order, and a line that agrees carries the
//   definition settled on, so batches landing in any order store the same one
//   (check-metric-definitions.ts).
// An input that goes quiet (a producer piping a line now and then) has what arrived written
// without waiting for more: a batch not yet full, then (see mark-idle.ts).

export interface ImportCounts {
  /** Non-blank lines (or entries) seen so far. */
  lines: number;
  /** Entries that passed validation and were handed to the writer. */
  accepted: number;
  rejected: number;
  created: number;
  updated: number;
  unchanged: number;
}

/** What importDossiers reports as it goes: the counts so far, and how much of the input is done. */
export interface ImportProgress extends ImportCounts {
  /**
   * Bytes from the input's start whose lines are all written to the database or rejected
   * (blank ones included; lines given as text count as UTF-8 with a line break each): the
   * input's size once the last batch is written, not before. Lines read and counted above run
   * ahead of it by those being parsed and the batches being filled or written.
   */
  bytesDone: number;
}

export interface ImportSummary extends ImportCounts {
  rejections: ImportRejection[];
  durationMs: number;
  /** Parser threads that did the parsing (0: the main thread did). */
  parserThreads: number;
  /** Why parser threads were asked for but not used (their code could not be loaded). */
  parserThreadsUnavailable?: string;
}

export type UpsertFn = (db: Db, companies: PreparedCompany[]) => Promise<UpsertResult>;

export interface WriteDossiersOptions {
  db: Db;
  batchSize?: number;
  /** Called after each batch is written, at least every second while lines are counted, and at the end. */
  onProgress?: (progress: ImportCounts) => void;
  /** Called for each rejection as it happens (invalid entry or refused by the database). */
  onReject?: (rejection: ImportRejection) => void;
  /** Batches written at once, each on its own connection (default DEFAULT_WRITERS; 1: one after the other). */
  writers?: number;
  /** Defaults to upsertPreparedCompanies; injectable so tests can simulate a failing store. */
  upsert?: UpsertFn;
}

/**
 * The input: its lines, or blocks of whole lines as read from a file or stream, which the
 * parser threads decode themselves (see line-blocks.ts).
 */
export type ImportInput = { lines: AsyncIterable<string> | Iterable<string>; blocks?: undefined } | { blocks: AsyncIterable<LineBlock>; lines?: undefined };

export type ImportDossiersOptions = ImportInput & ImportOptions;

interface ImportOptions extends Omit<WriteDossiersOptions, 'onReject' | 'onProgress'> {
  /** Called after each batch is written, at least every second while lines are counted, and at the end. */
  onProgress?: (progress: ImportProgress) => void;
  /**
   * Called for each rejection with the line's bytes as they were read, its line break ("\n" or
   * "\r\n") included, bytes that are not UTF-8 too (e.g. to write a rejects file). A line given
   * as text (`lines`) comes as its UTF-8 with no break, as does a file's last line without one.
   */
  onReject?: (rejection: ImportRejection, line: Uint8Array) => void;
  /**
   * Parser threads for JSON.parse, validation and preparation (0, the default: the main
   * thread parses). When their code cannot be loaded the main thread parses, and the summary
   * says why.
   */
  workers?: number;
}

export const DEFAULT_BATCH_SIZE = 500;
// A batch's companies are all held in memory until its transaction commits (~13-15 kB each, and
// several batches at once: those read ahead, the one being filled, two being written), one
// refused by the database is retried company by company, and a batch only costs a handful of
// round trips whatever its size (write-companies.ts), so larger ones save nothing measurable.
// 100,000,000 made a 226 MB file one transaction, at 871 MB of memory instead of 581.
export const MAX_BATCH_SIZE = 5_000;
// onProgress is also called this often while lines are counted, not only after each batch is
// written: a batch the database holds (a lock, a slow disk) left the counts unsaid meanwhile.
const PROGRESS_EVERY_MS = 1_000;
// Two: the database works on one batch while the other is being sent or committed, and on
// two cores a third only queues.
export const DEFAULT_WRITERS = 2;
// Lines per message to a parser thread, when the input is lines (blocks go as they were read:
// ~75 lines per 1 MB read of a file, a few per read of a pipe): big enough that messaging
// costs little per line, small enough that the threads start at once and a chunk is not a
// whole batch.
const CHUNK_LINES = 100;
// Lines sent ahead of the writer, per thread: keeps every thread busy while the main thread
// waits on the database. At least three batches ahead in all: while the main thread waits
// for a writer to free up it sends no new lines, so what is ahead must cover that wait, or
// the next batch is only starting to be parsed when a writer is free (measured: 2,300 →
// 2,550 companies/s going from 400 lines to three batches). That bounds the memory held
// ahead to a few batches (~15 kB per company). Counted in lines, not chunks, as chunks
// differ in size.
const LINES_AHEAD_PER_THREAD = 4 * CHUNK_LINES;
// A chunk's parse has ended (its entries, or its failure, are ready to be awaited).
const PARSED: unique symbol = Symbol('parsed');

/** JSON Lines in, companies in the store out; see docs/import-format.md. */
export async function importDossiers(options: ImportDossiersOptions): Promise<ImportSummary> {
  const { lines, blocks, onReject, onProgress, workers = 0, ...rest } = options;
  // The lines not yet written or rejected (those parsed ahead and two batches), for onReject:
  // as given (text), or views into the blocks read (their bytes, never decoded or copied here).
  // A view holds its block, as a slice of a decoded block's text would hold that text.
  const pending = new Map<number, string | Uint8Array>();
  const keep = onReject ? (line: number, raw: string | Uint8Array) => pending.set(line, raw) : undefined;
  // Lines up to here were handed to the writer or are blank (a blank line never is).
  let handedUpTo = 0;

  let pool: ParsePool | undefined;
  let unavailable: string | undefined;
  if (workers > 0) {
    const started = await startParsePool({ size: workers });
    if (started.ok) pool = started.pool;
    else unavailable = started.reason;
  }

  const done = trackInputDone();
  // The input in chunks of consecutive lines: each block as it is, or CHUNK_LINES lines (fewer
  // when the input goes quiet); IDLE where it went quiet.
  async function* read(): AsyncGenerator<{ input: ParseInput; lineCount: number; bytes: number } | Idle> {
    if (blocks !== undefined) {
      for await (const block of markIdle(blocks)) {
        yield block === IDLE ? IDLE : { input: { firstLine: block.firstLine, bytes: block.bytes }, lineCount: block.lineCount, bytes: block.inputBytes };
      }
      return;
    }
    let chunk: string[] = [];
    let bytes = 0;
    let line = 0;
    const cut = () => {
      const cutChunk = { input: { firstLine: line - chunk.length + 1, lines: chunk }, lineCount: chunk.length, bytes };
      chunk = [];
      bytes = 0;
      return cutChunk;
    };
    // Lines given as a list are all there: only lines that come over time can stop coming.
    for await (const text of Symbol.asyncIterator in lines ? markIdle(lines) : lines) {
      if (text === IDLE) {
        if (chunk.length > 0) yield cut();
        yield IDLE;
        continue;
      }
      line++;
      chunk.push(text);
      bytes += Buffer.byteLength(text) + 1;
      if (chunk.length >= CHUNK_LINES) yield cut();
    }
    if (chunk.length > 0) yield cut();
  }
  async function* chunks(): AsyncGenerator<{ input: ParseInput; lineCount: number } | Idle> {
    for await (const chunk of read()) {
      if (chunk !== IDLE) done.read(chunk.input.firstLine, chunk.lineCount, chunk.bytes);
      yield chunk;
    }
  }
  // What the writer is handed, in line order: how far through the input it is (see input-done.ts).
  async function* handed(entries: AsyncIterable<PreparedEntry | Idle>): AsyncGenerator<PreparedEntry | Idle> {
    for await (const entry of entries) {
      if (entry !== IDLE) {
        const line = entry.ok ? entry.line : entry.rejection.line;
        done.handed(line, entry.ok);
        // Entries come in line order, so the lines skipped since the last one were blank.
        if (keep) for (let blank = handedUpTo + 1; blank < line; blank++) pending.delete(blank);
        handedUpTo = line;
      }
      yield entry;
    }
    done.ended();
  }
  const textOf = (chunk: ParseInput) => ('lines' in chunk ? chunk.lines : blockLines(chunk.bytes));
  // A rejected line goes to onReject as it was read: a block's bytes, not their decoded text
  // (bytes that are not UTF-8 decode to U+FFFD, and "\r\n" loses its "\r").
  const keepAll = (chunk: ParseInput) => {
    if (!keep) return;
    const raw = 'lines' in chunk ? chunk.lines : blockLineBytes(chunk.bytes);
    for (let i = 0; i < raw.length; i++) keep(chunk.firstLine + i, raw[i]!);
  };

  async function* inThread(): AsyncGenerator<PreparedEntry | Idle> {
    for await (const read of chunks()) {
      if (read === IDLE) {
        yield IDLE;
        continue;
      }
      const chunk = read.input;
      keepAll(chunk);
      const texts = textOf(chunk);
      for (let i = 0; i < texts.length; i++) {
        const entry = prepareLine(texts[i]!, chunk.firstLine + i);
        if (entry !== null) yield entry;
      }
    }
  }

  async function* viaPool(p: ParsePool): AsyncGenerator<PreparedEntry | Idle> {
    const ahead: { entries: Promise<PreparedEntry[]>; parsed: Promise<typeof PARSED>; lineCount: number }[] = [];
    const maxLinesAhead = Math.max(p.size * LINES_AHEAD_PER_THREAD, 3 * (rest.batchSize ?? DEFAULT_BATCH_SIZE));
    let linesAhead = 0;
    const next = () => {
      const oldest = ahead.shift()!;
      linesAhead -= oldest.lineCount;
      return oldest.entries;
    };
    const input = chunks();
    // The input's next chunk while it is being waited for.
    let waiting: ReturnType<typeof input.next> | null = null;
    let ended = false;
    try {
      for (;;) {
        waiting ??= input.next();
        // While the input has nothing new, the writer gets what is parsed: a line from a
        // producer that writes one now and then (never quiet for IDLE_MS) would otherwise wait
        // for the read-ahead to fill, minutes at a line a second. A parsed chunk counts only
        // from the event loop's next turn, so input already read (a file's) comes first and
        // the read-ahead still fills.
        const got = ahead.length === 0 ? await waiting : await Promise.race([waiting, ahead[0]!.parsed]);
        if (got === PARSED) {
          yield* await next();
          continue;
        }
        waiting = null;
        if (got.done) break;
        if (got.value === IDLE) {
          while (ahead.length > 0) yield* await next();
          yield IDLE;
          continue;
        }
        const { input: chunk, lineCount } = got.value;
        // The main thread never decodes blocks; when the caller wants rejected lines, it only
        // finds where each line ends (keepAll). Its views stay valid because parse copies the
        // block to the thread: handing the block's memory over instead would empty them.
        keepAll(chunk);
        const entries = p.parse(chunk);
        // Handled when awaited below; until then a failed chunk must not count as unhandled.
        entries.catch(() => undefined);
        const parsed = () => new Promise<typeof PARSED>((resolve) => setImmediate(resolve, PARSED));
        ahead.push({ entries, parsed: entries.then(parsed, parsed), lineCount });
        linesAhead += lineCount;
        while (linesAhead >= maxLinesAhead) yield* await next();
      }
      ended = true;
      while (ahead.length > 0) yield* await next();
    } finally {
      // Stopped early while the input waits for more (see markIdle): it closes when that read ends.
      if (!ended && waiting !== null) {
        waiting.catch(() => undefined);
        input.return(undefined).catch(() => undefined);
      } else if (!ended) await input.return(undefined);
    }
  }

  try {
    const parsed = pool ? viaPool(pool) : inThread();
    const summary = await writePreparedEntries(handed(withAgreedDefinitions(parsed, definitionCheck(rest.db))), {
      ...rest,
      onProgress: onProgress && ((counts) => onProgress({ ...counts, bytesDone: done.bytes() })),
      onReject: onReject && ((r) => {
        const raw = pending.get(r.line) ?? '';
        pending.delete(r.line);
        // A copy: what the caller keeps must not hold a whole block.
        onReject(r, typeof raw === 'string' ? Buffer.from(raw, 'utf8') : Buffer.from(raw));
      }),
    }, (written) => {
      written.forEach((l) => pending.delete(l));
      done.written(written);
    });
    return { ...summary, parserThreads: pool?.size ?? 0, ...(unavailable === undefined ? {} : { parserThreadsUnavailable: unavailable }) };
  } finally {
    await pool?.close();
  }
}

// Errors that say "the database is unreachable", not "this company is bad": retrying company
// by company would only reject every good line, so the import stops (it can simply be re-run).
function isUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; name?: unknown };
  const code = typeof e?.code === 'string' ? e.code : '';
  return ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', '57P01', '57P02', '57P03', '53300'].includes(code)
    || code.startsWith('08') || e?.name === 'KnexTimeoutError';
}
function databaseReason(err: unknown): string {
  const { message, sqlstate, detail } = databaseErrorParts(err);
  return `${message}${detail === null ? '' : ` (${detail})`}${sqlstate ? ` [SQLSTATE ${sqlstate}]` : ''}`;
}

const isTransient = (err: unknown) => ['40P01', '40001'].includes(String((err as { code?: unknown })?.code));

/**
 * The batching core shared by the file importer and the in-process sample loader. Invalid
 * entries are counted and kept; valid ones go to the store in batches; a batch the database
 * refuses is retried company by company so only the bad company is rejected.
 */
export async function writeDossiers(
  entries: AsyncIterable<ParsedEntry> | Iterable<ParsedEntry>,
  options: WriteDossiersOptions,
): Promise<ImportSummary> {
  async function* prepared(): AsyncGenerator<PreparedEntry> {
    // Prepared at once (mostly strings), so the parsed dossier's many small objects die young
    // instead of being carried by the garbage collector until the batch is written.
    for await (const entry of entries) yield prepareEntry(entry);
  }
  return writePreparedEntries(withAgreedDefinitions(prepared(), definitionCheck(options.db)), options);
}

const definitionCheck = (db: Db): CheckMetricDefinitions =>
  checkMetricDefinitions(() => db('metric_definitions').select<StoredMetricDefinition[]>('slug', 'name', 'categories', 'unit'));

/** The entries, with those that describe a metric otherwise than it is defined turned into rejections. */
async function* withAgreedDefinitions(entries: AsyncIterable<PreparedEntry | Idle>, check: CheckMetricDefinitions): AsyncGenerator<PreparedEntry | Idle> {
  for await (const entry of entries) {
    if (entry === IDLE || !entry.ok) {
      yield entry;
      continue;
    }
    const verdict = await check(entry.line, entry.company);
    yield verdict.ok
      ? { ...entry, company: verdict.company }
      : { ok: false, rejection: { line: entry.line, fiscalCode: entry.company.fiscalCode, reason: verdict.reason } };
  }
}

async function writePreparedEntries(
  entries: AsyncIterable<PreparedEntry | Idle>,
  options: WriteDossiersOptions,
  onBatchWritten?: (lines: number[]) => void,
): Promise<ImportSummary> {
  const started = performance.now();
  const batchSize = Math.max(1, options.batchSize ?? DEFAULT_BATCH_SIZE);
  const upsert = options.upsert ?? upsertPreparedCompanies;
  const progress: ImportCounts = { lines: 0, accepted: 0, rejected: 0, created: 0, updated: 0, unchanged: 0 };
  const rejections: ImportRejection[] = [];
  const reject = (r: ImportRejection) => {
    rejections.push(r);
    progress.rejected++;
    options.onReject?.(r);
  };

  let reported = performance.now();
  const report = () => {
    reported = performance.now();
    options.onProgress?.({ ...progress });
  };

  const add = (r: UpsertResult) => {
    progress.created += r.created;
    progress.updated += r.updated;
    progress.unchanged += r.unchanged;
  };

  async function writeBatch(batch: { line: number; company: PreparedCompany }[]): Promise<void> {
    try {
      add(await upsertWithOneRetry(batch.map((b) => b.company)));
    } catch (err) {
      if (isUnavailable(err)) throw err;
      for (const item of batch) {
        try {
          add(await upsertWithOneRetry([item.company]));
        } catch (single) {
          if (isUnavailable(single)) throw single;
          // A metric another import defined otherwise meanwhile: the reason says how, as the check before batching does.
          const reason = single instanceof MetricDefinitionConflict ? single.message : `database refused the company: ${databaseReason(single)}`;
          reject({ line: item.line, fiscalCode: item.company.fiscalCode, reason });
        }
      }
    }
    onBatchWritten?.(batch.map((b) => b.line));
    report();
  }

  async function upsertWithOneRetry(companies: PreparedCompany[]): Promise<UpsertResult> {
    try {
      return await upsert(options.db, companies);
    } catch (err) {
      if (!isTransient(err)) throw err;
      return upsert(options.db, companies);
    }
  }

  const writers = Math.max(1, options.writers ?? DEFAULT_WRITERS);
  // Oldest first; a batch leaves when it has been awaited.
  const inFlight: { codes: Set<string>; written: Promise<void> }[] = [];
  let overlapped = false;
  let batch: { line: number; company: PreparedCompany }[] = [];
  let codes = new Set<string>();
  const sharesACode = (a: Set<string>, b: Set<string>) => {
    for (const code of a) if (b.has(code)) return true;
    return false;
  };
  const flush = async () => {
    if (batch.length === 0) return;
    const next = { batch, codes };
    batch = [];
    codes = new Set();
    while (inFlight.length >= writers || inFlight.some((f) => sharesACode(next.codes, f.codes))) await inFlight.shift()!.written;
    if (inFlight.length > 0) overlapped = true;
    const written = writeBatch(next.batch);
    // Keep the rejection handled until it is awaited (a later flush or the end).
    written.catch(() => undefined);
    inFlight.push({ codes: next.codes, written });
  };

  try {
    for await (const entry of entries) {
      if (entry === IDLE) {
        // The input went quiet: what has arrived is written now, and is seen to be (a failure
        // ends the import now, not when more input comes).
        await flush();
        while (inFlight.length > 0) await inFlight.shift()!.written;
        continue;
      }
      progress.lines++;
      if (options.onProgress && performance.now() - reported >= PROGRESS_EVERY_MS) report();
      if (!entry.ok) {
        reject(entry.rejection);
        continue;
      }
      progress.accepted++;
      // A fiscal code repeated within a batch would collapse into one write; flushing first keeps
      // "the last line wins" and the counts honest.
      if (codes.has(entry.company.fiscalCode)) await flush();
      batch.push({ line: entry.line, company: entry.company });
      codes.add(entry.company.fiscalCode);
      if (batch.length >= batchSize) await flush();
    }
    await flush();
    while (inFlight.length > 0) await inFlight.shift()!.written;
  } finally {
    // On an error, let the other batches settle before the caller closes the connections.
    await Promise.allSettled(inFlight.map((f) => f.written));
  }
  if (overlapped) await linkUnlinkedHolders(options.db);
  options.onProgress?.({ ...progress });
  rejections.sort((a, b) => a.line - b.line);
  return { ...progress, rejections, durationMs: Math.round(performance.now() - started), parserThreads: 0 };
}
