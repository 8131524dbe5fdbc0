/**
 * Why a file could not be opened for writing or written, in words (a folder that does not exist,
 * a full disk), not Node's "ENOENT: no such file or directory, open '…'". Said after the file's
 * name by every command that writes one (import's --rejects, sample generate's --out).
 */
export function writeFailureReason(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  switch (e?.code) {
    // Opening for writing creates the file: only its folder can be missing.
    case 'ENOENT': return 'no such directory';
    case 'ENOTDIR': return 'a part of its path is not a directory';
    case 'EISDIR': return 'it is a directory';
    case 'EACCES':
    case 'EPERM': return 'permission denied';
    case 'EROFS': return 'read-only file system';
    case 'ENOSPC': return 'no space left on device';
    case 'EDQUOT': return 'disk quota exceeded';
    case 'EFBIG': return 'file too large';
    default: return e instanceof Error ? e.message : String(err);
  }
}
