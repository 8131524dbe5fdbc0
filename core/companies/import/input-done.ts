// How much of the input is done, for a progress bar: the bytes from the input's start whose
// lines have all been written to the database or rejected. Bytes read run ahead of that by the
// lines parsed ahead and the batches being filled or in flight (several megabytes), so a bar
// that followed reads stood at 100% while the last batches were still being written.
// Counted by chunk (a block of the file, or CHUNK_LINES lines): a chunk counts once each of its
// lines is done, and chunks count in input order, so what is counted is in the database. It
// keeps three numbers for each chunk not yet done: as many as are ahead of the database.

export interface InputDone {
  /** A chunk was read: `lineCount` lines from `firstLine` on, `bytes` long. In input order. */
  read(firstLine: number, lineCount: number, bytes: number): void;
  /** The writer was handed the entry of `line`, and so every line before it; `held` while it waits for its batch. */
  handed(line: number, held: boolean): void;
  /** Lines of a batch that is written (or refused by the database: rejected, and so done too). */
  written(lines: readonly number[]): void;
  /** Every line read has been handed to the writer. */
  ended(): void;
  /** Bytes done, from the input's start. */
  bytes(): number;
}

export function trackInputDone(): InputDone {
  // Chunks not done yet, in input order; `end` is the line after the chunk's last.
  const chunks: { end: number; bytes: number; held: number }[] = [];
  let handedBefore = 1;
  let done = 0;
  // Lines come in order, so the chunk of a line is the first that ends after it.
  const chunkOf = (line: number) => {
    let lo = 0;
    let hi = chunks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (chunks[mid]!.end > line) hi = mid;
      else lo = mid + 1;
    }
    return chunks[lo]!;
  };
  const settle = () => {
    while (chunks.length > 0 && chunks[0]!.held === 0 && chunks[0]!.end <= handedBefore) done += chunks.shift()!.bytes;
  };
  return {
    read(firstLine, lineCount, bytes) {
      chunks.push({ end: firstLine + lineCount, bytes, held: 0 });
    },
    handed(line, held) {
      if (held) chunkOf(line).held++;
      handedBefore = line + 1;
      settle();
    },
    written(lines) {
      for (const line of lines) chunkOf(line).held--;
      settle();
    },
    ended() {
      handedBefore = Infinity;
      settle();
    },
    bytes: () => done,
  };
}
