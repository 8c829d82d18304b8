// Bounded synchronous read of the plugin's stdin (the network configuration).
import { fstatSync, readSync } from 'node:fs';
import { errnoCode } from '../errno/errno.ts';

/** Largest configuration we accept on stdin; a larger one is refused with code 7. */
export const MAX_STDIN_BYTES = 1024 * 1024;

// Made on first use: a V8 start-up snapshot (the standalone executable) is built without SharedArrayBuffer.
let sleepCell: Int32Array | undefined;

/**
 * Read fd 0 to EOF but never more than `limit + 1` bytes, so an oversized input is detected
 * without buffering all of it. A terminal on stdin reads as empty (about text, VERSION by hand).
 */
export function readStdinSync(limit = MAX_STDIN_BYTES): Buffer {
  // A character device on fd 0 is a terminal (or /dev/null): nothing to read. fstat instead of
  // node:tty's isatty, which costs ~1.3 ms of module loading at every plugin start.
  if (isCharDevice(0)) return Buffer.alloc(0);
  // Start small (configs are usually < 4 KiB) and grow by doubling up to limit + 1.
  let buf = Buffer.allocUnsafe(Math.min(64 * 1024, limit + 1));
  let n = 0;
  while (true) {
    if (n === buf.length) {
      if (buf.length > limit) break;
      const bigger = Buffer.allocUnsafe(Math.min(buf.length * 2, limit + 1));
      buf.copy(bigger, 0, 0, n);
      buf = bigger;
    }
    let got: number;
    try {
      got = readSync(0, buf, n, buf.length - n, null);
    } catch (e) {
      const code = errnoCode(e);
      // A non-blocking stdin (inherited O_NONBLOCK) has no data yet: wait briefly and retry.
      if (code === 'EAGAIN') {
        sleepCell ??= new Int32Array(new SharedArrayBuffer(4));
        Atomics.wait(sleepCell, 0, 0, 2);
        continue;
      }
      if (code === 'EOF') break;
      throw e;
    }
    if (got === 0) break;
    n += got;
  }
  return buf.subarray(0, n);
}

function isCharDevice(fd: number): boolean {
  try {
    return fstatSync(fd).isCharacterDevice();
  } catch {
    return true; // a closed stdin reads as empty
  }
}
