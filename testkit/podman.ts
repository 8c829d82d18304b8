// podman as a real CNI runtime for the end-to-end tests: a private podman (own --root/--runroot,
// containers.conf, CNI bin and conf dirs, busybox rootfs) run inside a node namespace of the test
// with `nsenter --net=...` (not `ip netns exec`, whose private /sys remount hides the cgroup mounts
// runc needs). podman 4.3's CNI backend is libcni, the library containerd and CRI-O use.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from './exec.ts';

const ROOT = join(import.meta.dirname, '..');
const BUSYBOX = '/bin/busybox';
/** libcni's result cache (podman 4.3 gives no way to move it): `<net>-<containerID>-<ifname>`. */
export const CNI_RESULTS_DIR = '/var/lib/cni/results';
/** host-local's default dataDir (reference layout): `<dir>/<network>/<ip>`. */
export const DEFAULT_IPAM_DIR = '/var/lib/cni/networks';
/**
 * Explicit limits: podman's default RLIMIT_NOFILE (1048576) is above the hard limit of a process in
 * this CI container (20000), and runc then fails with "error setting rlimit type 7: operation not permitted".
 */
const ULIMITS = ['--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=1024:1024'];

export interface PodmanResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface PodmanEnvOptions {
  /** Node namespace name (under /var/run/netns) podman runs in; the CNI plugins run there too. */
  netns: string;
  /** Built plugins to copy into the env's CNI bin dir (default dist/bin of the repository); null: leave it empty (e.g. for `weft install`). */
  binDir?: string | null;
}

/** Spawns argv with env; never rejects on a non-zero exit (a timeout kills it and reports code 124). */
export function spawnCollect(argv: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<PodmanResult> {
  return run(argv, { env, timeoutMs });
}

/** Builds a minimal rootfs: a static busybox with a symlink per applet, /www/index.html for httpd. */
export function buildBusyboxRootfs(dir: string): void {
  for (const d of ['bin', 'etc', 'proc', 'sys', 'dev', 'tmp', 'www', 'root']) mkdirSync(join(dir, d), { recursive: true });
  copyFileSync(BUSYBOX, join(dir, 'bin', 'busybox'));
  for (const applet of ['sh', 'sleep', 'httpd', 'ip', 'ping', 'wget', 'cat', 'true', 'hostname', 'nc']) {
    symlinkSync('busybox', join(dir, 'bin', applet));
  }
  writeFileSync(join(dir, 'www', 'index.html'), 'hello from a weft container\n');
}

const live = new Set<PodmanEnv>();
let hooked = false;

/** Last-resort cleanup when the test process exits without after() hooks (crash, Ctrl-C). */
function hookExit(): void {
  if (hooked) return;
  hooked = true;
  // Prepended: must run before topology.ts's exit hook deletes the node namespaces.
  process.prependListener('exit', () => {
    for (const env of live) env.destroySync();
  });
}

/** One private podman bound to a node namespace; destroy() removes its containers, caches and files. */
export class PodmanEnv {
  readonly dir: string;
  readonly rootfs: string;
  readonly binDir: string;
  readonly confDir: string;
  readonly netns: string;
  /** The env's containers.conf (CONTAINERS_CONF of every podman run). */
  readonly confFile: string;
  private readonly networks = new Set<string>();
  private readonly sandboxes = new Set<string>();
  private destroyed = false;

  constructor(opts: PodmanEnvOptions) {
    this.netns = opts.netns;
    this.dir = mkdtempSync(join(tmpdir(), 'weft-podman-'));
    this.rootfs = join(this.dir, 'rootfs');
    this.binDir = join(this.dir, 'cni-bin');
    this.confDir = join(this.dir, 'cni-conf');
    this.confFile = join(this.dir, 'containers.conf');
    live.add(this);
    hookExit();
    buildBusyboxRootfs(this.rootfs);
    mkdirSync(this.binDir);
    mkdirSync(this.confDir);
    const src = opts.binDir === undefined ? join(ROOT, 'dist', 'bin') : opts.binDir;
    if (src !== null) for (const f of readdirSync(src)) copyFileSync(join(src, f), join(this.binDir, f));
    // lock_type "file": the default SHM locks (/dev/shm/libpod_lock) are shared by every podman
    // on the machine, and a fresh runroot "refreshes" by freeing all of them; tmp_dir keeps
    // libpod's state out of /run/libpod; events go to a file (no journald in a container).
    writeFileSync(
      this.confFile,
      [
        '[network]',
        'network_backend = "cni"',
        `cni_plugin_dirs = [${JSON.stringify(this.binDir)}]`,
        `network_config_dir = ${JSON.stringify(this.confDir)}`,
        '[engine]',
        'lock_type = "file"',
        'events_logger = "file"',
        `events_logfile_path = ${JSON.stringify(join(this.dir, 'events.log'))}`,
        `tmp_dir = ${JSON.stringify(join(this.dir, 'libpod-tmp'))}`,
        '',
      ].join('\n'),
    );
  }

  /** Writes a conflist into the env's CNI conf dir; podman sees it as network `conf.name`. */
  addNetwork(conf: { name: string } & Record<string, unknown>): void {
    this.trackNetwork(conf.name);
    writeFileSync(join(this.confDir, `${conf.name}.conflist`), JSON.stringify(conf, null, 2));
  }

  /** podman's global flags for this env (its private store and runtime). */
  globalArgs(): string[] {
    return [
      '--root', join(this.dir, 'root'), '--runroot', join(this.dir, 'runroot'),
      '--runtime', 'runc', '--cgroup-manager=cgroupfs', '--network-backend', 'cni', '--storage-driver', 'vfs',
    ];
  }

  /** Runs `podman <args>` inside the node namespace; never rejects on a non-zero exit. */
  podman(args: string[], timeoutMs = 120_000): Promise<PodmanResult> {
    const argv = ['nsenter', `--net=/var/run/netns/${this.netns}`, 'podman', ...this.globalArgs(), ...args];
    return spawnCollect(argv, { ...process.env, CONTAINERS_CONF: this.confFile }, timeoutMs);
  }

  /** Like podman(), but throws with podman's stderr on failure; returns stdout. */
  async must(args: string[], timeoutMs?: number): Promise<string> {
    const r = await this.podman(args, timeoutMs);
    if (r.code !== 0) throw new Error(`podman ${args.join(' ')} failed (${r.code}): ${r.stderr.trim()}`);
    return r.stdout;
  }

  /** Starts a detached container from the busybox rootfs on `network`; returns its ID. */
  async run(name: string, network: string, cmd: string[], extra: string[] = []): Promise<string> {
    const id = (await this.must(['run', '-d', '--name', name, '--network', network, ...ULIMITS, ...extra, '--rootfs', this.rootfs, ...cmd])).trim();
    const key = (await this.inspect(name)).NetworkSettings?.SandboxKey;
    if (key !== undefined && key !== '') this.sandboxes.add(key);
    return id;
  }

  /** Runs a one-shot container (--rm) and returns its result. */
  runOnce(network: string, cmd: string[], extra: string[] = []): Promise<PodmanResult> {
    return this.podman(['run', '--rm', '--network', network, ...ULIMITS, ...extra, '--rootfs', this.rootfs, ...cmd]);
  }

  /** `podman inspect` of one container. */
  async inspect(name: string): Promise<ContainerInspect> {
    const list = JSON.parse(await this.must(['inspect', '--type', 'container', name])) as ContainerInspect[];
    const c = list[0];
    if (c === undefined) throw new Error(`podman inspect ${name}: no such container`);
    return c;
  }

  /** The container's address on `network` as podman recorded it from the CNI result. */
  async containerIp(name: string, network: string): Promise<{ ip: string; prefixLen: number; gateway: string }> {
    const n = (await this.inspect(name)).NetworkSettings?.Networks?.[network];
    if (n?.IPAddress === undefined || n.IPAddress === '') throw new Error(`container ${name} has no address on ${network}`);
    return { ip: n.IPAddress, prefixLen: n.IPPrefixLen ?? 0, gateway: n.Gateway ?? '' };
  }

  /** Removes containers (SIGKILL at once: busybox as PID 1 ignores SIGTERM). */
  async rm(names: string[]): Promise<void> {
    await this.must(['rm', '-f', '-t', '0', ...names]);
  }

  /**
   * Marks a network (conflist written by someone else, e.g. `weft install`) as this env's: destroy()
   * removes its libcni cache entries and its host-local dir under the default /var/lib/cni/networks.
   */
  trackNetwork(name: string): void {
    if (!/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/.test(name)) throw new Error(`bad network name ${JSON.stringify(name)}`);
    this.networks.add(name);
  }

  /** libcni result-cache files of this env's networks still present. */
  cachedResults(): string[] {
    if (!existsSync(CNI_RESULTS_DIR)) return [];
    return readdirSync(CNI_RESULTS_DIR).filter((f) => [...this.networks].some((n) => f.startsWith(`${n}-`)));
  }

  /** Removes all containers, our libcni cache entries, leftover sandbox netns files and the temp dir. Idempotent. */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    await this.podman(['rm', '-f', '-t', '0', '--all'], 60_000).catch(() => undefined);
    this.removeFiles();
  }

  /**
   * Synchronous destroy for exit hooks. With the node namespace still there, `podman rm` runs in it
   * (CNI DEL must never run in the root namespace); without it, the containers are only killed.
   */
  destroySync(): void {
    if (this.destroyed) return;
    const env = { ...process.env, CONTAINERS_CONF: this.confFile };
    if (existsSync(`/var/run/netns/${this.netns}`)) {
      spawnSync('nsenter', [`--net=/var/run/netns/${this.netns}`, 'podman', ...this.globalArgs(), 'rm', '-f', '-t', '0', '--all'], { env, stdio: 'ignore', timeout: 60_000 });
    } else {
      const ps = spawnSync('podman', [...this.globalArgs(), 'ps', '-q', '--format', '{{.Pid}}'], { env, encoding: 'utf8', timeout: 30_000 });
      for (const pid of (ps.stdout ?? '').split(/\s+/).filter((p) => /^[1-9]\d*$/.test(p))) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          /* gone */
        }
      }
    }
    this.removeFiles();
  }

  /** The file-system part of destroy: libcni cache entries, sandbox netns files, mounts under dir, dir. */
  private removeFiles(): void {
    this.destroyed = true;
    live.delete(this);
    for (const f of this.cachedResults()) rmSync(join(CNI_RESULTS_DIR, f), { force: true });
    for (const n of this.networks) rmSync(join(DEFAULT_IPAM_DIR, n), { recursive: true, force: true });
    const umount = (p: string): void => void spawnSync('umount', ['-l', p], { stdio: 'ignore', timeout: 10_000 });
    for (const key of this.sandboxes) {
      if (!existsSync(key)) continue;
      umount(key);
      rmSync(key, { force: true });
    }
    // Anything podman left mounted under our dir (shm, rootfs binds) must go before rm -rf.
    const mounts = readFileSync('/proc/self/mountinfo', 'utf8').split('\n').map((l) => l.split(' ')[4] ?? '').filter((m) => m.startsWith(this.dir));
    for (const m of mounts.reverse()) umount(m);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The parts of `podman inspect` the tests read. */
export interface ContainerInspect {
  Id: string;
  State?: { Running?: boolean; Pid?: number };
  NetworkSettings?: {
    SandboxKey?: string;
    Networks?: Record<string, { IPAddress?: string; IPPrefixLen?: number; Gateway?: string; MacAddress?: string }>;
  };
}

/** A unique network name for a test run (also a host-local data dir name and libcni cache prefix). */
export function uniqueNetworkName(prefix = 'weftpm'): string {
  return `${prefix}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

/**
 * Why podman cannot run containers on this machine, or undefined when it can: checks root, the
 * binaries, then starts one container with --network none in a scratch namespace. Networking is
 * left out on purpose: a CNI failure is a test failure, never a reason to skip.
 */
export async function podmanSkipReason(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'needs root (network namespaces, podman as root)';
  for (const bin of ['/usr/bin/podman', '/usr/sbin/runc', '/usr/bin/nsenter', BUSYBOX]) {
    if (!existsSync(bin)) return `${bin} is missing (apt-get install podman runc busybox-static util-linux)`;
  }
  const ns = `weft-t-${process.pid}-${randomBytes(3).toString('hex')}`;
  const add = await spawnCollect(['ip', 'netns', 'add', ns], process.env, 10_000);
  if (add.code !== 0) return `ip netns add failed: ${add.stderr.trim()}`;
  const env = new PodmanEnv({ netns: ns, binDir: join(ROOT, 'dist', 'bin') });
  try {
    const r = await env.runOnce('none', ['/bin/true']);
    return r.code === 0 ? undefined : `podman cannot start a container here (exit ${r.code}): ${r.stderr.trim().slice(-1500)}`;
  } finally {
    await env.destroy();
    await spawnCollect(['ip', 'netns', 'del', ns], process.env, 10_000);
  }
}

/** A banner for skipped podman tests, so a skip is never silent. */
export function loudSkip(reason: string): string {
  const msg = `########## SKIPPED podman e2e: ${reason} ##########`;
  process.stderr.write(`${msg}\n`);
  return msg;
}
