// An export that is compressed, zipped or saved as UTF-16 is not JSON Lines, but line by line
// the importer would only see lines that are not UTF-8 text (72,278 of them for one .gz) and
// reject each. Its first bytes say what it is, so it is refused in one line before anything
// is imported. A UTF-8 byte order mark (EF BB BF) is fine: the importer ignores it.

/** Bytes needed at the input's start to recognise every signature below. */
export const SIGNATURE_BYTES = 4;

const UNCOMPRESS: readonly { magic: readonly number[]; what: string; command: string }[] = [
  { magic: [0x1f, 0x8b], what: 'gzip-compressed', command: 'zcat' },
  { magic: [0x42, 0x5a, 0x68], what: 'bzip2-compressed', command: 'bzcat' },
  { magic: [0xfd, 0x37, 0x7a, 0x58], what: 'xz-compressed', command: 'xzcat' },
  { magic: [0x28, 0xb5, 0x2f, 0xfd], what: 'zstd-compressed', command: 'zstdcat' },
];
const ZIP = [0x50, 0x4b, 0x03, 0x04];
// Byte order marks, or a "{" with no mark; UTF-32 first: its little-endian forms begin with UTF-16's.
const UTF32 = [[0xff, 0xfe, 0x00, 0x00], [0x00, 0x00, 0xfe, 0xff], [0x7b, 0x00, 0x00, 0x00], [0x00, 0x00, 0x00, 0x7b]];
// A line of JSON starts with "{": in UTF-16 without a mark, that is 7B 00 or 00 7B. A raw NUL
// byte is never in UTF-8 JSON text, so neither pair starts a file that could import.
const UTF16: readonly { mark: readonly number[]; encoding: string }[] = [
  { mark: [0xff, 0xfe], encoding: 'UTF-16LE' },
  { mark: [0xfe, 0xff], encoding: 'UTF-16BE' },
  { mark: [0x7b, 0x00], encoding: 'UTF-16LE' },
  { mark: [0x00, 0x7b], encoding: 'UTF-16BE' },
];

const startsWith = (head: Uint8Array, magic: readonly number[]) => head.length >= magic.length && magic.every((b, i) => head[i] === b);

// As typed in a shell: quoted when it holds anything but the usual path characters.
function shellWord(text: string): string {
  return /^[\w./+,:@%=-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * Why an input whose first bytes are `head` cannot be imported, in one line naming the way
 * out; null when it may be JSON Lines. `file` is its path, or "-" for standard input.
 */
export function refusalOfInputStart(head: Uint8Array, file: string): string | null {
  const name = file === '-' ? 'standard input' : file;
  const source = file === '-' ? 'FILE' : shellWord(file);
  for (const { magic, what, command } of UNCOMPRESS) {
    if (startsWith(head, magic)) return `${name} is ${what}: decompress it first, e.g. \`${command} ${source} | cli import -\``;
  }
  if (startsWith(head, ZIP)) return `${name} is a zip archive: extract it first, e.g. \`unzip -p ${source} | cli import -\``;
  if (UTF32.some((bom) => startsWith(head, bom))) return `${name} is UTF-32 text: save it as UTF-8`;
  const utf16 = UTF16.find(({ mark }) => startsWith(head, mark));
  if (utf16) return `${name} is UTF-16 text: save it as UTF-8, e.g. \`iconv -f ${utf16.encoding} -t UTF-8 ${source} > companies-utf8.jsonl\``;
  return null;
}
