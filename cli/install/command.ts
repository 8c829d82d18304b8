// `weft install` and `weft uninstall`: their flags, the run, the printout (lines, or --json) and the
// exit code (0 done, 1 failed or files kept, 2 bad option). Runs in the caller's mount namespace;
// writes only under the directories the flags name.
import { Command } from 'commander';
import { existsSync, realpathSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { install } from './install.ts';
import { BACKENDS, DEFAULTS, FLANNEL_NETWORK_NAME, normalizeInstallOptions } from './options.ts';
import { uninstall, type UninstallReport } from './uninstall.ts';

/** Where the commands write (the CLI's stdout and stderr). */
interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
}

interface RawInstallFlags {
  backend?: string;
  source?: string;
  binDir?: string;
  confDir?: string;
  unitDir?: string;
  agentDir?: string;
  weftConfDir?: string;
  stateDir?: string;
  network?: string;
  networkName?: string;
  conflistName?: string;
  dryRun?: boolean;
  standalone?: boolean | string;
  singleNode?: boolean;
  kubeSubnetMgr?: boolean;
  nodeName?: string;
  kubeconfigFile?: string;
  etcdEndpoints?: string;
  etcdPrefix?: string;
  etcdCafile?: string;
  etcdCertfile?: string;
  etcdKeyfile?: string;
  etcdUsername?: string;
  etcdPassword?: string;
  netConf?: string;
  uninstall?: boolean;
  force?: boolean;
  json?: boolean;
}

/** The built executables next to this one (dist/bin/weft), else the repository's dist/bin (run from source). */
export function defaultSourceDir(argv1: string | undefined): string {
  // realpath: as an npm bin, argv[1] is the node_modules/.bin/weft symlink.
  let self = resolve(argv1 ?? '.');
  try {
    self = realpathSync(self);
  } catch {
    /* keep the path as given */
  }
  const here = dirname(self);
  for (const dir of [here, join(here, '..', 'dist', 'bin')]) if (existsSync(join(dir, 'bridge'))) return dir;
  return here;
}

/**
 * The standalone executable `--standalone` installs when given no path: this very file when the CLI
 * runs as the standalone executable, else dist/sea/weft beside the bundles' dist/bin.
 */
export function defaultStandaloneFile(sourceDir: string): string {
  if (process.getBuiltinModule('node:sea').isSea()) return process.execPath;
  return join(sourceDir, '..', 'sea', 'weft');
}

function printUninstall(io: Io, r: UninstallReport, json: boolean): number {
  if (json) io.out(`${JSON.stringify(r)}\n`);
  else if (!r.found) io.out('weft: nothing to uninstall (no manifest)\n');
  else {
    for (const f of r.files) io.out(`${f.action.padEnd(13)} ${f.path}\n`);
    for (const d of r.removedDirs) io.out(`rmdir         ${d}\n`);
    for (const d of r.keptDirs) io.out(`kept dir      ${d} (not empty)\n`);
  }
  const kept = r.files.filter((f) => f.action === 'kept-modified');
  if (kept.length > 0) {
    io.err(`weft: ${kept.length} file(s) changed since the install were kept; rerun with --force to remove them\n`);
    return 1;
  }
  return 0;
}

function addDirOptions(cmd: Command): Command {
  return cmd
    .option('--state-dir <dir>', 'install manifest and backups', DEFAULTS.stateDir)
    .option('--dry-run', 'print what would be done, change nothing')
    .option('--json', 'print the report as one JSON document');
}

/** The install subcommand; `argv1` finds the built executables beside this weft, `setExit` gets the exit code. */
export function installCommand(io: Io, argv1: string | undefined, setExit: (code: number) => void): Command {
  return addDirOptions(new Command('install'))
    .description('copy the plugins into the CNI bin dir (atomically), write a conflist, weftd and its systemd unit')
    .option('--backend <name>', `one of ${BACKENDS.join(', ')}`, 'bridge')
    .option('--source <dir>', 'built executables (default: next to this weft, or dist/bin)')
    .option('--bin-dir <dir>', 'CNI plugin directory', DEFAULTS.binDir)
    .option('--conf-dir <dir>', 'CNI configuration directory', DEFAULTS.confDir)
    .option('--unit-dir <dir>', 'systemd unit directory', DEFAULTS.unitDir)
    .option('--agent-dir <dir>', 'where weftd goes', DEFAULTS.agentDir)
    .option('--weft-conf-dir <dir>', "weftd's net-conf.json directory", DEFAULTS.weftConfDir)
    .option('--network <cidr>', 'pod network (bridge subnet or flannel Network)', DEFAULTS.network)
    .option('--network-name <name>', `CNI network name (default: the name of the flannel conflist in --conf-dir being replaced, else ${FLANNEL_NETWORK_NAME} for the flannel backends, as kube-flannel, and ${DEFAULTS.networkName} for bridge)`)
    .option('--conflist-name <file>', 'conflist file name', DEFAULTS.conflistName)
    .option('--standalone [file]', 'install the standalone executable (no Node.js needed on the node) once as <bin-dir>/weft, each plugin a hard link to it (default file: this weft when standalone, else dist/sea/weft; the default mode when this weft is the standalone executable)')
    .option('--etcd-endpoints <urls>', 'flannel backends: lease subnets in etcd v3 (comma-separated URLs), for a cluster')
    .option('--etcd-prefix <prefix>', 'etcd key prefix (weftd\'s default /coreos.com/network)')
    .option('--etcd-cafile <path>', 'CA bundle verifying etcd (TLS)')
    .option('--etcd-certfile <path>', 'client certificate for etcd (with --etcd-keyfile)')
    .option('--etcd-keyfile <path>', 'client key for etcd (with --etcd-certfile)')
    .option('--etcd-username <name>', 'etcd user')
    .option('--etcd-password <password>', 'etcd password (written to a 0600 environment file, not into the unit)')
    .option('--kube-subnet-mgr', 'flannel backends: subnets from the Kubernetes API (only when the installed weftd has it)')
    .option('--node-name <name>', 'with --kube-subnet-mgr: this node\'s Node name, the unit\'s NODE_NAME (default: the host name)')
    .option('--kubeconfig-file <path>', 'with --kube-subnet-mgr: kubeconfig weftd reads on the node (required unless run in a pod)')
    .option('--single-node', 'flannel backends: the file store, for this one machine only (nodes never learn each other\'s subnets)')
    .option('--net-conf <path>', 'use this existing net-conf.json (flannel\'s keys) instead of writing one')
    .option('--uninstall', 'remove what the last install wrote, restore what it replaced')
    .option('--force', 'with --uninstall: also remove files changed since the install')
    .action((f: RawInstallFlags) => {
      if (f.uninstall === true) {
        setExit(printUninstall(io, uninstall(resolve(f.stateDir ?? DEFAULTS.stateDir), { force: f.force === true, dryRun: f.dryRun === true }), f.json === true));
        return;
      }
      const { standalone, ...flags } = f;
      const sourceDir = f.source ?? defaultSourceDir(argv1);
      // The standalone executable installs itself unless told otherwise: it carries no bundles to install.
      const wanted = standalone ?? (process.getBuiltinModule('node:sea').isSea() ? true : undefined);
      const standaloneFile = wanted === undefined || wanted === false ? {} : { standaloneFile: wanted === true ? defaultStandaloneFile(sourceDir) : wanted };
      const opts = normalizeInstallOptions({ ...flags, sourceDir, ...standaloneFile });
      const r = install(opts);
      if (f.json === true) io.out(`${JSON.stringify(r)}\n`);
      else {
        const verb = opts.dryRun ? 'would write' : 'wrote';
        for (const w of r.written) io.out(`${verb} ${w.path} (${w.what})\n`);
        for (const p of r.preview ?? []) io.out(`\n--- ${p.path} (${p.what})\n${p.text}${p.text.endsWith('\n') ? '' : '\n'}`);
        for (const b of r.backedUp) io.out(`backed up ${b} (restored by --uninstall)\n`);
        for (const t of r.retired) io.out(`${t.action} ${t.path} (not part of this backend)\n`);
        for (const n of r.notes) io.out(`note: ${n}\n`);
        if (!opts.dryRun && r.written.some((w) => w.what === 'systemd unit')) io.out('next: systemctl daemon-reload && systemctl enable --now weftd\n');
      }
      for (const w of r.warnings) io.err(`weft: warning: ${w}\n`);
      setExit(0);
    });
}

/** The uninstall subcommand (install --uninstall under its own name). */
export function uninstallCommand(io: Io, setExit: (code: number) => void): Command {
  return addDirOptions(new Command('uninstall'))
    .description('same as install --uninstall')
    .option('--force', 'also remove files changed since the install')
    .action((f: RawInstallFlags) => {
      setExit(printUninstall(io, uninstall(resolve(f.stateDir ?? DEFAULTS.stateDir), { force: f.force === true, dryRun: f.dryRun === true }), f.json === true));
    });
}
