// `weft install --uninstall`: undoes exactly what the manifest records. A file we wrote is removed,
// or replaced by its backup when the install had replaced something; a file changed since the
// install (by an admin or another tool) is kept unless forced; directories we created go when empty.
import { readFileSync, rmdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fsyncDir, publishFileSync } from '../../lib/fs/atomic-write.ts';
import { backupDir, fileSha256, manifestPath, readManifest, sha256, type ManifestEntry } from './manifest.ts';

/** What happened to one recorded file. */
export interface EntryOutcome {
  path: string;
  action: 'removed' | 'restored' | 'absent' | 'kept-modified';
}

/** What an uninstall did. */
export interface UninstallReport {
  /** False when there was no manifest (nothing installed). */
  found: boolean;
  files: EntryOutcome[];
  removedDirs: string[];
  /** Directories we created that still hold files someone else put there. */
  keptDirs: string[];
}

/** Undoes one manifest entry (restores its backup or removes it), then drops the backup. */
export function removeEntry(stateDir: string, e: ManifestEntry, force: boolean): EntryOutcome {
  const current = fileSha256(e.path);
  const backupPath = e.backup !== undefined ? join(backupDir(stateDir), e.backup) : undefined;
  const backup = backupPath !== undefined ? readFileSync(backupPath) : undefined;
  let action: EntryOutcome['action'];
  const ours = current === e.sha256 || (backup !== undefined && current === sha256(backup));
  if (!ours && current !== undefined && !force) {
    action = 'kept-modified';
  } else if (backup !== undefined) {
    // Atomic too: the restored plugin may be exec'd by a runtime right now.
    publishFileSync(e.path, backup, e.backupMode ?? 0o644);
    action = 'restored';
  } else if (current !== undefined) {
    rmSync(e.path, { force: true });
    fsyncDir(dirname(e.path));
    action = 'removed';
  } else {
    action = 'absent';
  }
  if (backupPath !== undefined && action !== 'kept-modified') rmSync(backupPath, { force: true });
  return { path: e.path, action };
}

/** Uninstalls what the manifest in `stateDir` records; a no-op report when nothing was installed. */
export function uninstall(stateDir: string, opts: { force?: boolean; dryRun?: boolean } = {}): UninstallReport {
  const report: UninstallReport = { found: false, files: [], removedDirs: [], keptDirs: [] };
  const m = readManifest(stateDir);
  if (m === undefined) return report;
  report.found = true;
  if (opts.dryRun === true) {
    report.files = m.files.map((e) => ({ path: e.path, action: e.backup !== undefined ? 'restored' : 'removed' }));
    return report;
  }
  for (const e of [...m.files].reverse()) report.files.push(removeEntry(stateDir, e, opts.force === true));
  const kept = report.files.filter((f) => f.action === 'kept-modified');
  if (kept.length > 0) {
    // Keep the manifest (and the backups of kept files) so a later --force can finish the job.
    const keptPaths = new Set(kept.map((k) => k.path));
    publishFileSync(manifestPath(stateDir), `${JSON.stringify({ ...m, files: m.files.filter((e) => keptPaths.has(e.path)) }, null, 2)}\n`, 0o600);
    return report;
  }
  rmSync(manifestPath(stateDir), { force: true });
  for (const d of [...m.createdDirs].reverse()) {
    try {
      rmdirSync(d);
      report.removedDirs.push(d);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOTEMPTY' || code === 'EEXIST') report.keptDirs.push(d);
      else if (code !== 'ENOENT') throw e;
    }
  }
  return report;
}
