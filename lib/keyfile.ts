/**
 * Reads a key file (`access.keys[i].keyFile`, `attest.keyFile`): a regular file of at most
 * 64 KiB, read at once. Anything else is refused with a reason that never quotes the content:
 * a directory, a named pipe (whose read would wait for a writer, the start hung with no word), a
 * device (`/dev/zero` would be read until memory runs out), a file too large to be a key.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/** The largest key file read: a PEM key is a few hundred bytes. */
export const keyFileMaxBytes = 64 * 1024;

export class KeyFileError extends Error {
  /** The reason, e.g. `ENOENT` or `a named pipe, not a regular file`. */
  constructor(readonly reason: string) {
    super(reason);
  }
}

export function readKeyFileSync(path: string): string {
  let fd: number;
  try {
    // O_NONBLOCK: opening a named pipe does not wait for a writer (it is refused below).
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    throw new KeyFileError((err as NodeJS.ErrnoException).code ?? 'error');
  }
  try {
    const stat = fstatSync(fd);
    const kind = stat.isDirectory() ? 'a directory' : stat.isFIFO() ? 'a named pipe' : stat.isSocket() ? 'a socket' : stat.isCharacterDevice() || stat.isBlockDevice() ? 'a device' : stat.isFile() ? undefined : 'not a file';
    if (kind) throw new KeyFileError(`${kind}, not a regular file`);
    if (stat.size > keyFileMaxBytes) throw new KeyFileError(`${stat.size} bytes, more than a key file holds (at most ${keyFileMaxBytes})`);
    const buf = Buffer.alloc(keyFileMaxBytes + 1);
    let n = 0;
    for (let got; n < buf.length && (got = readSync(fd, buf, n, buf.length - n, null)) > 0; ) n += got;
    if (n > keyFileMaxBytes) throw new KeyFileError(`more than ${keyFileMaxBytes} bytes, more than a key file holds`);
    return buf.subarray(0, n).toString('utf8');
  } catch (err) {
    if (err instanceof KeyFileError) throw err;
    throw new KeyFileError((err as NodeJS.ErrnoException).code ?? 'error');
  } finally {
    closeSync(fd);
  }
}
