// Locating a delegated plugin on CNI_PATH and recognising weft bundles by their header line.
import { accessSync, closeSync, constants, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CniError, ErrorCode, invalidConfig } from './errors.ts';
import { isPlainName } from '../text/name-chars.ts';

/** The identity a weft bundle declares on its second line: `// weft-bundle <name> <version>`. */
export interface BundleHeader {
  name: string;
  version: string;
}

const HEADER_BYTES = 128;
const BUNDLE_RE = /^#![^\n]*\n\/\/ weft-bundle ([a-zA-Z0-9][a-zA-Z0-9_.-]*) ([0-9A-Za-z.+-]+)\n/;

/** A plugin `type` is one file name on CNI_PATH: no '/', no "..", the reference's charset. Code 7. */
export function validatePluginType(type: unknown): string {
  if (typeof type !== 'string' || type.length === 0 || type.length > 255 || !isPlainName(type)) {
    throw invalidConfig('invalid plugin type', `${JSON.stringify(type)} must be a plain file name`);
  }
  return type;
}

/**
 * The first executable regular file named `type` in the CNI_PATH directories, in order.
 * Throws code 100 (ErrorCode.pluginNotFound) when there is none; DEL callers may tolerate that.
 */
export function findInPath(type: string, dirs: readonly string[]): string {
  validatePluginType(type);
  for (const dir of dirs) {
    if (dir === '') continue;
    const file = join(dir, type);
    try {
      if (!statSync(file).isFile()) continue;
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here (or not executable): keep looking
    }
  }
  throw new CniError(ErrorCode.pluginNotFound, `failed to find plugin "${type}" in path`, `[${dirs.join(' ')}]`);
}

/** The weft-bundle header of `file` (first 128 bytes only), or undefined for any other executable. */
export function readBundleHeader(file: string): BundleHeader | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const buf = Buffer.alloc(HEADER_BYTES);
    const n = readSync(fd, buf, 0, HEADER_BYTES, 0);
    const m = BUNDLE_RE.exec(buf.subarray(0, n).toString('latin1'));
    return m && m[1] && m[2] ? { name: m[1], version: m[2] } : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * True when this process is the standalone executable (a Node single executable application) and
 * `file` is that same file (a hard link or symlink to it): then it is the same build of every plugin.
 */
export function isOwnStandaloneFile(file: string): boolean {
  if (!isStandalone()) return false;
  try {
    const a = statSync(file);
    ownFile ??= statSync(process.execPath);
    return a.ino === ownFile.ino && a.dev === ownFile.dev;
  } catch {
    return false;
  }
}

/** The running executable's identity, stat'ed once: an in-process delegate is looked up per command. */
let ownFile: { ino: number; dev: number } | undefined;

let standalone: boolean | undefined;

/** node:sea's isSea(), asked once (the module is loaded only on a delegation path). */
function isStandalone(): boolean {
  standalone ??= process.getBuiltinModule('node:sea').isSea();
  return standalone;
}

/** The header line our build writes at the top of every bundle (for scripts/build.ts and tests). */
export function formatBundleHeader(h: BundleHeader): string {
  return `#!/usr/bin/env node\n// weft-bundle ${h.name} ${h.version}\n`;
}
