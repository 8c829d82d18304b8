// Read and write per-netns sysctls under /proc/sys/net. The kernel picks the namespace when the
// file is opened, from the opening thread (net/sysctl_net.c resolves the table set through
// current->nsproxy->net_ns), so these act in the calling thread's netns, also inside withNetns.
// Only synchronous fs calls are used: libuv's thread pool threads never moved with setns.
import { closeSync, constants, openSync, readFileSync, writeSync } from 'node:fs';
import { hasNameBreakingChar } from '../text/name-chars.ts';
import { hasLoneSurrogate } from '../text/surrogates.ts'; // the kernel would see U+FFFD, another name

// Segments are interface names or keys: anything the kernel allows in a device name (dev_valid_name
// in net/core/dev.c: no '/', ':' or whitespace), minus control characters; '/' only between segments.
function wellFormedName(name: string): boolean {
  const segs = name.split('/');
  return segs.length >= 2 && segs[0] === 'net' && segs.every((seg, i) => i === 0 || (seg !== '' && !hasNameBreakingChar(seg))) && !hasLoneSurrogate(name);
}

/** Checks a sysctl name in slash form ('net/ipv4/ip_forward') and returns its /proc/sys path. */
export function validateSysctlName(name: string): string {
  if (typeof name !== 'string' || !wellFormedName(name)) {
    throw new TypeError(`invalid sysctl name ${JSON.stringify(name)}: expected net/<seg>/... with interface-name segments`);
  }
  if (name.split('/').some((seg) => seg === '.' || seg === '..')) {
    throw new TypeError(`invalid sysctl name ${JSON.stringify(name)}: '.' and '..' segments are not allowed`);
  }
  return `/proc/sys/${name}`;
}

/** Reads a sysctl in the calling thread's netns, without the trailing newline. */
export function readSysctl(name: string): string {
  const text = readFileSync(validateSysctlName(name), 'utf8');
  return text.endsWith('\n') ? text.slice(0, -1) : text;
}

/** Writes a sysctl in the calling thread's netns; errors keep their code (ENOENT: no such key/link). */
export function writeSysctl(name: string, value: string | number): void {
  const path = validateSysctlName(name);
  const fd = openSync(path, constants.O_WRONLY); // libuv adds O_CLOEXEC
  try {
    const bytes = Buffer.from(String(value));
    // proc_sys handlers parse the whole value from one write at offset 0 (fs/proc/proc_sysctl.c).
    const n = writeSync(fd, bytes, 0, bytes.length, 0);
    if (n !== bytes.length) throw new Error(`short write to ${path}: ${n} of ${bytes.length} bytes`);
  } finally {
    closeSync(fd);
  }
}

/** Idempotent: writes the sysctl only when its current value differs; returns whether it wrote. */
export function ensureSysctl(name: string, value: string | number): boolean {
  if (readSysctl(name).trim() === String(value).trim()) return false;
  writeSysctl(name, value);
  return true;
}
