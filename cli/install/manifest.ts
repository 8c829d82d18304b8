// The install manifest: every file an install wrote (with its hash and mode), the backup of the
// file it replaced if there was one, and the directories it created. `--uninstall` works only
// from this record, so it removes exactly what was installed and restores what was replaced.
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { publishFileSync } from '../../lib/fs/atomic-write.ts';

/** One file written by the installer. */
export interface ManifestEntry {
  /** Absolute path of the installed file. */
  path: string;
  /** sha256 (hex) of what the installer wrote. */
  sha256: string;
  mode: number;
  /** File name under `<stateDir>/backups/` holding the file this one replaced. */
  backup?: string;
  /** Mode of the replaced file (restored with it). */
  backupMode?: number;
}

/** What an install did, as stored in `<stateDir>/manifest.json`. */
export interface Manifest {
  format: 1;
  backend: string;
  installedAt: string;
  files: ManifestEntry[];
  /** Directories the installer created, outermost first (removed in reverse when empty). */
  createdDirs: string[];
}

/** Path of the manifest in a state dir. */
export function manifestPath(stateDir: string): string {
  return join(stateDir, 'manifest.json');
}

/** Directory of the backups in a state dir. */
export function backupDir(stateDir: string): string {
  return join(stateDir, 'backups');
}

/** Reads the manifest of a previous install; undefined when there is none. Throws on a corrupt one. */
export function readManifest(stateDir: string): Manifest | undefined {
  const p = manifestPath(stateDir);
  if (!existsSync(p)) return undefined;
  const doc = JSON.parse(readFileSync(p, 'utf8')) as Partial<Manifest>;
  if (doc.format !== 1 || !Array.isArray(doc.files) || !Array.isArray(doc.createdDirs)) {
    throw new Error(`${p}: not a weft install manifest (format ${String(doc.format)})`);
  }
  return doc as Manifest;
}

/** Writes the manifest atomically (a crash leaves the previous one or the new one). */
export function writeManifest(stateDir: string, m: Manifest): void {
  publishFileSync(manifestPath(stateDir), `${JSON.stringify(m, null, 2)}\n`, 0o600);
}

/** sha256 (hex) of bytes. */
export function sha256(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Hashes by file identity: the hard links of a standalone install are one 100 MB file, read once. */
const byInode = new Map<string, string>();

/** sha256 of a regular file, or undefined when the path is missing or not a regular file. */
export function fileSha256(path: string): string | undefined {
  let key: string;
  try {
    const st = lstatSync(path);
    if (!st.isFile()) return undefined;
    key = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
  } catch {
    return undefined;
  }
  const known = byInode.get(key);
  if (known !== undefined) return known;
  const h = sha256(readFileSync(path));
  byInode.set(key, h);
  return h;
}
