/**
 * `bytes` as a file or pipe's reads would hand them over: chunks of `size` bytes, or of each of
 * `size`'s sizes in turn (to cut lines and characters at awkward places).
 */
export async function* inReads(bytes: Buffer, size: number | readonly number[]): AsyncGenerator<Uint8Array> {
  const sizes = typeof size === 'number' ? [size] : size;
  let at = 0;
  for (let i = 0; at < bytes.length; i++) {
    const length = sizes[i % sizes.length]!;
    yield bytes.subarray(at, at + length);
    at += length;
  }
}
