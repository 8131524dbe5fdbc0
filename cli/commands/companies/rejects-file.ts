import { open, stat } from 'node:fs/promises';
import path from 'node:path';
import type { FileIdentity } from './read-lines.js';
import { writeFailureReason } from './write-failure-reason.js';

// The file --rejects names. The documented workflow is "fix the rejects file and import it
// again", so the next step is often `import rejected.jsonl --rejects rejected.jsonl`: opened
// for writing, that file would be emptied before a line of it was read (and the import would
// report 0 lines, successfully). It is refused first, whatever path names it.

export interface RejectsFile {
  /** Appends one line (its bytes as read, its line break included). Ignored once writing failed. */
  write(line: Uint8Array): void;
  /** Flushes and closes the file; rejects, naming the file and why, if a write failed (a full disk). */
  close(): Promise<void>;
}

export interface InputFile {
  /** As given on the command line; "-" for standard input. */
  file: string;
  identity: FileIdentity | null;
}

const cannotWrite = (file: string, err: unknown) => new Error(`cannot write the rejects file ${file}: ${writeFailureReason(err)}`);

/** Refuses (throws) a rejects file that is the input itself: the same file, or the same path. */
export async function refuseRejectsOverInput(rejects: string, input: InputFile): Promise<void> {
  const existing = await stat(rejects).catch(() => null);
  const sameFile = existing !== null && input.identity !== null && existing.dev === input.identity.dev && existing.ino === input.identity.ino;
  const samePath = input.file !== '-' && path.resolve(rejects) === path.resolve(input.file);
  if (!sameFile && !samePath) return;
  const what = input.file === '-' ? 'the file standard input reads' : samePath || rejects === input.file ? 'the file being imported' : `the file being imported (${input.file})`;
  throw new Error(`--rejects ${rejects} is ${what}: writing it would empty it before it is read; name another file`);
}

/**
 * Opens (creates or empties) the rejects file now, so that a path that cannot be written is
 * refused before any line is imported. `onFailure` is told once if a later write fails.
 */
export async function openRejectsFile(file: string, onFailure: (err: Error) => void): Promise<RejectsFile> {
  const handle = await open(file, 'w').catch((err: unknown) => {
    throw cannotWrite(file, err);
  });
  const stream = handle.createWriteStream();
  let failed: Error | undefined;
  stream.on('error', (err) => {
    if (failed) return;
    failed = cannotWrite(file, err);
    onFailure(failed);
  });
  return {
    write(line) {
      if (!failed) stream.write(line);
    },
    async close() {
      if (!failed) await new Promise<void>((resolve) => stream.end(() => resolve()));
      // A stream that failed has closed its file (autoClose); one that ended has too.
      if (!stream.closed) await new Promise<void>((resolve) => stream.once('close', () => resolve()));
      if (failed) throw failed;
    },
  };
}
