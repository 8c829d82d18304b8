// `weft install`: backs up each file it is about to replace, records the plan in the manifest,
// then replaces each file atomically. Re-installing (an upgrade) keeps the original backups, so
// one uninstall always returns to the state before the first install.
import { spawnSync } from 'node:child_process';
import { lstatSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { linkFileAtomicSync, publishFileSync } from '../../lib/fs/atomic-write.ts';
import { ensureDirs } from '../../lib/fs/ensure-dirs.ts';
import { backupDir, readManifest, sha256, writeManifest, type Manifest, type ManifestEntry } from './manifest.ts';
import { missingEtcdFiles } from './lease-source.ts';
import { usesWeftd, type InstallOptions } from './options.ts';
import { planInstall, type PlannedFile } from './plan.ts';
import { renderNetConf, weftdCommand } from './render.ts';
import { removeEntry, type EntryOutcome } from './uninstall.ts';

/** What an install did (or would do, with dryRun). */
export interface InstallReport {
  written: Array<{ path: string; what: string }>;
  backedUp: string[];
  createdDirs: string[];
  /** Files of a previous install that this one no longer needs (another backend), undone. */
  retired: EntryOutcome[];
  /** Problems that did not stop the install (e.g. weftd cannot start from where it was put). */
  warnings: string[];
  /** What the operator still has to do (e.g. put the network config into etcd). */
  notes: string[];
  /** dryRun only: the text files that would be written, secrets hidden. */
  preview?: Array<{ path: string; what: string; text: string }>;
}

/** A dry run's view of the text files; values of secret files replaced by <hidden>. */
function previewOf(plan: PlannedFile[]): NonNullable<InstallReport['preview']> {
  return plan.flatMap((f) => {
    if (f.text === undefined) return [];
    const text = Buffer.from(f.data).toString('utf8');
    return [{ path: f.path, what: f.what, text: f.text === 'secret' ? text.replace(/^([A-Z_]+=).*$/gm, '$1<hidden>') : text }];
  });
}

/** Notes and warnings that follow from the lease source (none for the file store). */
function leaseSourceAdvice(opts: InstallOptions): { notes: string[]; warnings: string[] } {
  const src = opts.leaseSource;
  if (src.kind !== 'etcd') return { notes: [], warnings: [] };
  const notes: string[] = [];
  if (opts.netConfFile === undefined) {
    const key = `${(src.prefix ?? '/coreos.com/network').replace(/\/+$/, '')}/config`;
    const conf = JSON.stringify(JSON.parse(renderNetConf(opts)));
    notes.push(`weftd reads the network config from etcd ${key} (as flanneld); once per cluster, if it is not there yet: etcdctl put ${key} '${conf}'`);
  }
  const warnings = missingEtcdFiles(src).map((p) => `${p} does not exist yet: weftd needs it to reach etcd`);
  return { notes, warnings };
}

/** Installs per `opts`; idempotent (a second run rewrites the same bytes and keeps the first backups). */
export function install(opts: InstallOptions): InstallReport {
  const plan = planInstall(opts);
  const report: InstallReport = { written: plan.map((f) => ({ path: f.path, what: f.what })), backedUp: [], createdDirs: [], retired: [], ...leaseSourceAdvice(opts) };
  const prior = readManifest(opts.stateDir);
  if (opts.dryRun) return { ...report, preview: previewOf(plan) };

  // Checked before anything changes, so a refusal leaves no trace.
  const existingModes = plan.map((f) => regularFileMode(f.path));
  const created = new Set(prior?.createdDirs ?? []);
  const mkdirs = (dir: string, mode?: number): void => {
    for (const d of ensureDirs(dir, mode)) {
      created.add(d);
      report.createdDirs.push(d);
    }
  };
  // 0700: the backups are copies of system files (a conflist may carry credentials).
  mkdirs(backupDir(opts.stateDir), 0o700);
  for (const f of plan) mkdirs(dirname(f.path));

  const priorByPath = new Map((prior?.files ?? []).map((e) => [e.path, e]));
  const entries: ManifestEntry[] = [];
  // The standalone file's bytes back every hard link: hashed once.
  const hashes = new Map<Uint8Array, string>();
  const hashOf = (data: Uint8Array): string => hashes.get(data) ?? hashes.set(data, sha256(data)).get(data) ?? '';
  plan.forEach((f, i) => {
    const entry: ManifestEntry = { path: f.path, sha256: hashOf(f.data), mode: f.mode };
    const old = priorByPath.get(f.path);
    if (old !== undefined) {
      // Ours already: keep the backup of what was there before the first install.
      if (old.backup !== undefined) Object.assign(entry, { backup: old.backup, backupMode: old.backupMode ?? 0o644 });
    } else {
      const mode = existingModes[i];
      if (mode !== undefined) {
        // Named by the path's hash: distinct paths never share a backup, even across re-installs.
        const name = `${sha256(f.path).slice(0, 16)}-${basename(f.path)}`;
        publishFileSync(join(backupDir(opts.stateDir), name), readFileSync(f.path), 0o600);
        Object.assign(entry, { backup: name, backupMode: mode });
        report.backedUp.push(f.path);
      }
    }
    entries.push(entry);
  });

  // Files the previous install wrote that this plan does not (e.g. bridge after flannel-vxlan).
  const planned = new Set(plan.map((f) => f.path));
  const stale = (prior?.files ?? []).filter((e) => !planned.has(e.path));
  const manifest: Manifest = {
    format: 1,
    backend: opts.backend,
    installedAt: new Date().toISOString(),
    // Stale entries stay recorded until undone, so a crash here never loses a backup.
    files: [...entries, ...stale],
    createdDirs: [...created],
  };
  // Recorded before anything is replaced: an interrupted install can still be uninstalled.
  writeManifest(opts.stateDir, manifest);
  for (const f of plan) writePlanned(f);
  for (const e of stale) report.retired.push(removeEntry(opts.stateDir, e, false));
  writeManifest(opts.stateDir, { ...manifest, files: entries });
  if (usesWeftd(opts.backend)) {
    const w = checkStarts(weftdCommand(opts));
    if (w !== undefined) report.warnings.push(w);
  }
  return report;
}

/** Puts one planned file in place atomically: its bytes, or a hard link to the file it names. */
function writePlanned(f: PlannedFile): void {
  if (f.linkTo !== undefined) linkFileAtomicSync(f.linkTo, f.path);
  else publishFileSync(f.path, f.data, f.mode);
}

/** Runs `<weftd command> --version` from its installed place; a message when it cannot start there. */
function checkStarts(cmd: string[]): string | undefined {
  const [bin = '', ...args] = cmd;
  const r = spawnSync(bin, [...args, '--version'], { encoding: 'utf8', timeout: 15_000, stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status === 0) return undefined;
  const why = r.error?.message ?? (r.stderr.split('\n').find((l) => /Error|error/.test(l)) ?? r.stderr).trim();
  return `${bin} --version failed where it was installed (${why}): weftd will not start from the unit`;
}

/** Mode bits of a regular file at `path`; undefined when missing. Refuses to replace anything else. */
function regularFileMode(path: string): number | undefined {
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return undefined;
  }
  if (!st.isFile()) throw new Error(`${path} exists and is not a regular file: refusing to replace it`);
  return st.mode & 0o7777;
}
