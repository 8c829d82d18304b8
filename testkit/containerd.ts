// containerd as a real CRI runtime for the end-to-end tests: Debian's containerd (1.6, config schema
// version 2, CRI plugin `io.containerd.grpc.v1.cri`) with its own root, state, socket, config and
// CNI dirs, started inside a node namespace with `nsenter --net=...` (not `ip netns exec`, whose
// private /sys remount hides the cgroup mounts runc needs) and driven over CRI by `crictl`, as
// kubelet drives it. Self-contained on purpose: it imports nothing from the other harness files.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run as exec } from './exec.ts';
import { destroyAtExit } from './exit-cleanup.ts';
import { inNetnsPath } from './netns.ts';

const ROOT = join(import.meta.dirname, '..');
/** Where scripts/cri-setup.sh caches crictl and the busybox image. */
export const CACHE_DIR = process.env['WEFT_CACHE_DIR'] ?? '/var/cache/weft';
/** crictl as scripts/cri-setup.sh installs it (same version there). */
export const CRICTL = join(CACHE_DIR, 'go-bin', 'cri-tools-v1.36.0', 'crictl');
export const IMAGE_TAR = join(CACHE_DIR, 'images', 'weft-busybox.tar');
/** The image inside IMAGE_TAR: the sandbox (pause) image and the test containers' image. */
export const IMAGE = 'weft.test/busybox:1';
/** libcni's result cache, which containerd 1.6 (go-cni) keeps at the machine-wide default: `<net>-<sandboxID>-<ifname>`. */
export const CNI_RESULTS_DIR = '/var/lib/cni/results';

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Spawns argv; never rejects on a non-zero exit (a timeout kills it and reports code 124). */
export function run(argv: string[], timeoutMs = 60_000): Promise<RunResult> {
  return exec(argv, { timeoutMs });
}

/** Why the containerd tests cannot run here, or undefined when they can (binaries and cached artefacts only). */
export function containerdMissing(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (network namespaces, containerd as root)';
  for (const bin of ['/usr/bin/containerd', '/usr/bin/ctr', '/usr/bin/containerd-shim-runc-v2', '/usr/sbin/runc', '/usr/bin/nsenter']) {
    if (!existsSync(bin)) return `${bin} is missing (scripts/deps.sh installs containerd, runc, util-linux)`;
  }
  for (const f of [CRICTL, IMAGE_TAR]) if (!existsSync(f)) return `${f} is missing (scripts/cri-setup.sh builds it)`;
  return undefined;
}

/** A CRI pod as the tests ask for it. */
export interface PodSpec {
  name: string;
  /** hostPort -> containerPort (TCP), sent by containerd to CNI as runtimeConfig.portMappings. */
  ports?: Array<{ hostPort: number; containerPort: number }>;
  /** Pod annotations (containerd turns kubernetes.io/{ingress,egress}-bandwidth into runtimeConfig.bandwidth). */
  annotations?: Record<string, string>;
}

/** What `crictl inspectp` tells about a sandbox. */
export interface PodInfo {
  id: string;
  state: string;
  ip: string;
  /** The sandbox's network namespace (a bind mount under the env's state dir). */
  netnsPath: string;
}


/** One private containerd bound to a node namespace; destroy() removes its pods, processes, mounts and files. */
export class ContainerdEnv {
  readonly dir: string;
  readonly sock: string;
  readonly confDir: string;
  readonly binDir: string;
  readonly netns: string;
  private readonly configFile: string;
  private readonly crictlConfig: string;
  private readonly logFile: string;
  private proc: ChildProcess | undefined;
  private readonly networks = new Set<string>();
  private destroyed = false;
  private readonly unregister: () => void;
  /** The cgroup (in every v1 hierarchy, or v2) that holds this env's pods. */
  readonly cgroupParent = `/weft-e2e-${process.pid}-${randomBytes(3).toString('hex')}`;

  private constructor(netns: string, binDir: string) {
    this.netns = netns;
    this.binDir = binDir;
    this.dir = mkdtempSync(join(tmpdir(), 'weft-ctrd-'));
    this.sock = join(this.dir, 'containerd.sock');
    this.confDir = join(this.dir, 'cni-conf');
    this.configFile = join(this.dir, 'config.toml');
    this.crictlConfig = join(this.dir, 'crictl.yaml');
    this.logFile = join(this.dir, 'containerd.log');
    this.unregister = destroyAtExit(this);
  }

  /**
   * Starts containerd in node namespace `netns` with `conflist` as its only CNI network (plugins from
   * `binDir`, default dist/bin) and imports the busybox image; throws with containerd's log on failure.
   */
  static async start(opts: { netns: string; conflist: { name: string } & Record<string, unknown>; binDir?: string }): Promise<ContainerdEnv> {
    const env = new ContainerdEnv(opts.netns, opts.binDir ?? join(ROOT, 'dist', 'bin'));
    try {
      mkdirSync(env.confDir);
      mkdirSync(join(env.dir, 'pods'));
      env.writeConflist(opts.conflist);
      env.writeConfig();
      await env.startDaemon();
      const r = await run(['ctr', '--address', env.sock, '--namespace', 'k8s.io', 'images', 'import', '--snapshotter', 'native', IMAGE_TAR], 60_000);
      if (r.code !== 0) throw new Error(`ctr images import failed (${r.code}): ${r.stderr.trim()}`);
      return env;
    } catch (e) {
      await env.destroy();
      throw e;
    }
  }

  /** Writes the conflist containerd loads (the only file of its conf dir, so max_conf_num 1 picks it). */
  writeConflist(conf: { name: string } & Record<string, unknown>): void {
    if (!/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/.test(conf.name)) throw new Error(`bad network name ${JSON.stringify(conf.name)}`);
    this.networks.add(conf.name);
    writeFileSync(join(this.confDir, '10-weft.conflist'), JSON.stringify(conf, null, 2));
  }

  /** containerd's config.toml (schema version 2, containerd 1.6). */
  private writeConfig(): void {
    const cri = 'plugins."io.containerd.grpc.v1.cri"';
    writeFileSync(this.configFile, [
      'version = 2',
      `root = ${JSON.stringify(join(this.dir, 'root'))}`,
      `state = ${JSON.stringify(join(this.dir, 'state'))}`,
      // opt writes /opt/containerd; the other snapshotters probe host file systems; none is needed.
      'disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",',
      '  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp"]',
      '[grpc]',
      `address = ${JSON.stringify(this.sock)}`,
      '[ttrpc]',
      `address = ${JSON.stringify(`${this.sock}.ttrpc`)}`,
      `[${cri}]`,
      `sandbox_image = ${JSON.stringify(IMAGE)}`,
      // This machine withholds CAP_SYS_RESOURCE: runc may only raise oom_score_adj.
      'restrict_oom_score_adj = true',
      'disable_apparmor = true',
      // Sandbox namespaces under our state dir: nothing lands in the machine's /var/run/netns.
      'netns_mounts_under_state_dir = true',
      `[${cri}.containerd]`,
      'snapshotter = "native"',
      'default_runtime_name = "runc"',
      `[${cri}.containerd.runtimes.runc]`,
      'runtime_type = "io.containerd.runc.v2"',
      `[${cri}.containerd.runtimes.runc.options]`,
      // runc's state of our containers under our dir, not the machine-wide /run/containerd/runc.
      `Root = ${JSON.stringify(join(this.dir, 'runc'))}`,
      `[${cri}.cni]`,
      `bin_dir = ${JSON.stringify(this.binDir)}`,
      `conf_dir = ${JSON.stringify(this.confDir)}`,
      'max_conf_num = 1',
      '',
    ].join('\n'));
    writeFileSync(this.crictlConfig, `runtime-endpoint: unix://${this.sock}\nimage-endpoint: unix://${this.sock}\ntimeout: 60\n`);
  }

  /** Starts the daemon in the node namespace and waits until CRI reports the network ready. */
  async startDaemon(): Promise<void> {
    if (this.running()) throw new Error('containerd is already running');
    const out = openSync(this.logFile, 'a');
    const [file = 'nsenter', ...args] = inNetnsPath(`/var/run/netns/${this.netns}`, ['containerd', '--config', this.configFile, '--log-level', 'info']);
    const child = spawn(file, args, { stdio: ['ignore', out, out] });
    closeSync(out);
    this.proc = child;
    const t0 = Date.now();
    let last = '';
    for (;;) {
      if (child.exitCode !== null) throw new Error(`containerd exited with ${child.exitCode}: ${this.log().slice(-3000)}`);
      if (existsSync(this.sock)) {
        const r = await this.crictl(['info'], 10_000);
        if (r.code === 0 && networkReady(r.stdout)) return;
        last = r.code === 0 ? r.stdout : r.stderr;
      }
      if (Date.now() - t0 > 30_000) throw new Error(`containerd not ready after 30 s: ${last.slice(0, 2000)}\n--- log ---\n${this.log().slice(-3000)}`);
      await new Promise((res) => setTimeout(res, 100));
    }
  }

  /** Whether the daemon process is alive. */
  running(): boolean {
    return this.proc !== undefined && this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** SIGKILLs the daemon (its shims and pods keep running) and waits for it to be gone. */
  async killDaemon(): Promise<void> {
    const p = this.proc;
    if (p === undefined || !this.running()) return;
    const closed = new Promise<void>((res) => p.once('close', () => res()));
    p.kill('SIGKILL');
    await closed;
  }

  /** containerd's log so far. */
  log(): string {
    try {
      return readFileSync(this.logFile, 'utf8');
    } catch {
      return '';
    }
  }

  /** Runs `crictl <args>` against this containerd, from inside the node namespace; never rejects on exit. */
  crictl(args: string[], timeoutMs = 90_000): Promise<RunResult> {
    return run(inNetnsPath(`/var/run/netns/${this.netns}`, [CRICTL, '--config', this.crictlConfig, ...args]), timeoutMs);
  }

  /** Like crictl(), but throws with crictl's stderr and containerd's log tail on failure; returns trimmed stdout. */
  async must(args: string[], timeoutMs?: number): Promise<string> {
    const r = await this.crictl(args, timeoutMs);
    if (r.code !== 0) throw new Error(`crictl ${args.join(' ')} failed (${r.code}): ${r.stderr.trim()}\n--- containerd log ---\n${this.log().slice(-2000)}`);
    return r.stdout.trim();
  }

  /** RunPodSandbox; returns the sandbox ID. */
  async runPod(spec: PodSpec): Promise<string> {
    return this.must(['runp', this.podConfig(spec)]);
  }

  /** RunPodSandbox expected to fail: crictl's result, whatever it is. */
  tryRunPod(spec: PodSpec): Promise<RunResult> {
    return this.crictl(['runp', this.podConfig(spec)]);
  }

  /** The pod-config.json crictl sends (written once per pod name). */
  private podConfig(spec: PodSpec): string {
    const file = join(this.dir, 'pods', `${spec.name}.json`);
    const logs = join(this.dir, 'logs', spec.name);
    mkdirSync(logs, { recursive: true });
    writeFileSync(file, JSON.stringify({
      metadata: { name: spec.name, namespace: 'weft-e2e', uid: `${spec.name}-${randomBytes(4).toString('hex')}`, attempt: 0 },
      hostname: spec.name,
      log_directory: logs,
      annotations: spec.annotations ?? {},
      port_mappings: (spec.ports ?? []).map((p) => ({ protocol: 0, container_port: p.containerPort, host_port: p.hostPort })),
      // A cgroup parent of our own, so destroy() can find and remove what runc leaves.
      linux: { cgroup_parent: this.cgroupParent },
    }));
    return file;
  }

  /** CreateContainer + StartContainer of the busybox image in a pod; returns the container ID. */
  async startContainer(podId: string, pod: PodSpec, name: string, command: string[]): Promise<string> {
    const file = join(this.dir, 'pods', `${pod.name}-${name}.json`);
    writeFileSync(file, JSON.stringify({ metadata: { name }, image: { image: IMAGE }, command, log_path: `${name}.log`, linux: {} }));
    const id = await this.must(['create', '--no-pull', podId, file, join(this.dir, 'pods', `${pod.name}.json`)]);
    await this.must(['start', id]);
    return id;
  }

  /** `crictl inspectp` of one sandbox: state, address and network namespace. */
  async inspectPod(podId: string): Promise<PodInfo> {
    const doc = JSON.parse(await this.must(['inspectp', '-o', 'json', podId])) as {
      status?: { id?: string; state?: string; network?: { ip?: string } };
      info?: { runtimeSpec?: { linux?: { namespaces?: Array<{ type?: string; path?: string }> } } };
    };
    const ns = doc.info?.runtimeSpec?.linux?.namespaces?.find((n) => n.type === 'network')?.path ?? '';
    return { id: doc.status?.id ?? podId, state: doc.status?.state ?? '', ip: doc.status?.network?.ip ?? '', netnsPath: ns };
  }

  /** StopPodSandbox then RemovePodSandbox (CNI DEL runs on stop). */
  async removePod(podId: string): Promise<void> {
    await this.must(['stopp', podId]);
    await this.must(['rmp', podId]);
  }

  /** IDs of the sandboxes containerd knows. */
  async podIds(): Promise<string[]> {
    return (await this.must(['pods', '-q'])).split('\n').filter(Boolean);
  }

  /** libcni result-cache files of this env's networks still present. */
  cachedResults(): string[] {
    if (!existsSync(CNI_RESULTS_DIR)) return [];
    return readdirSync(CNI_RESULTS_DIR).filter((f) => [...this.networks].some((n) => f.startsWith(`${n}-`)));
  }

  /** Removes every pod over CRI (CNI DEL in the node namespace), then the daemon, its shims, mounts and files. Idempotent. */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    if (this.running()) await this.crictl(['rmp', '-f', '-a'], 120_000).catch(() => undefined);
    this.destroySync();
  }

  /** Synchronous teardown for exit hooks: kills the daemon, shims and pods, unmounts and removes everything. */
  destroySync(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.unregister();
    if (this.running()) this.proc?.kill('SIGKILL');
    // The shims outlive containerd (each names our socket in its command line); the pods' processes
    // outlive their shim, and are found by their cgroup.
    for (const pid of this.shimPids()) signal(pid, 'SIGKILL');
    killAndRemoveCgroups(this.cgroupParent);
    const mounts = readFileSync('/proc/self/mountinfo', 'utf8').split('\n').map((l) => l.split(' ')[4] ?? '').filter((m) => m.startsWith(this.dir));
    for (const m of mounts.reverse()) spawnSync('umount', ['-l', m], { stdio: 'ignore', timeout: 10_000 });
    for (const f of this.cachedResults()) rmSync(join(CNI_RESULTS_DIR, f), { force: true });
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** PIDs of containerd-shim-runc-v2 processes serving this env. */
  private shimPids(): number[] {
    const cmdline = (p: string): string => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8');
      } catch {
        return '';
      }
    };
    return readdirSync('/proc').filter((p) => /^\d+$/.test(p) && cmdline(p).includes('containerd-shim') && cmdline(p).includes(this.sock)).map(Number);
  }
}

/** The cgroup dirs of `parent` (itself, then its pod and container children) in every hierarchy (v1) or the one (v2). */
function cgroupDirs(parent: string): string[] {
  const roots = existsSync('/sys/fs/cgroup/cgroup.controllers') ? ['/sys/fs/cgroup']
    : readdirSync('/sys/fs/cgroup').map((h) => join('/sys/fs/cgroup', h));
  const out: string[] = [];
  const walk = (dir: string): void => {
    out.push(dir);
    for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) walk(join(dir, e.name));
  };
  for (const r of roots) if (existsSync(join(r, parent))) walk(join(r, parent));
  return out;
}

/**
 * SIGKILLs every process left in cgroup `parent` (pods whose shim is already gone, e.g. killed with
 * the node namespace's processes) and removes its cgroup dirs, children first, once they are empty.
 */
function killAndRemoveCgroups(parent: string): void {
  const pids = (dirs: string[]): number[] => dirs.flatMap((d) => {
    try {
      return readFileSync(join(d, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
    } catch {
      return [];
    }
  });
  for (let attempt = 0; attempt < 50; attempt++) {
    const dirs = cgroupDirs(parent);
    if (dirs.length === 0) return;
    for (const pid of pids(dirs)) signal(pid, 'SIGKILL');
    for (const d of dirs.reverse()) {
      try {
        rmdirSync(d);
      } catch {
        /* busy until its processes are reaped: retried */
      }
    }
    spawnSync('sleep', ['0.1']);
  }
}

/** Whether `crictl info` reports the CRI condition NetworkReady (a CNI config was loaded). */
function networkReady(infoJson: string): boolean {
  try {
    const doc = JSON.parse(infoJson) as { status?: { conditions?: Array<{ type?: string; status?: boolean }> } };
    return doc.status?.conditions?.some((c) => c.type === 'NetworkReady' && c.status === true) === true;
  } catch {
    return false;
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    /* gone */
  }
}

/** A unique network name for a test run (also the host-local data dir name and libcni cache prefix). */
export function uniqueNetworkName(prefix = 'weftcd'): string {
  return `${prefix}-${process.pid}-${randomBytes(3).toString('hex')}`;
}
