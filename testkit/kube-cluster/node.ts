// One Kubernetes node of a test cluster: a network namespace on the underlay (made by Topology), a
// holder process owning the node's private mount namespace, a cgroup root of its own, containerd
// and a real kubelet started inside the holder's namespaces (nsenter -t, never `ip netns exec`,
// whose /sys remount hides the cgroup mounts). destroySync() follows kubelet-notes.md's order.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run, type ExecResult } from '../exec.ts';
import { CRICTL } from '../containerd.ts';
import type { SimNode } from '../topology.ts';
import { KUBE_BIN_DIR } from './control-plane.ts';
import { cgroupPids, setupCgroupRoot, teardownCgroupRoot } from './cgroups.ts';
import { containerdConfig, FAKE_SYSCTLS, holderScript, kubeletConfig, nodeDirs } from './node-files.ts';

/** What a node needs from its cluster. */
export interface KubeNodeOptions {
  sim: SimNode;
  /** Kubernetes node name (also the kubelet's --hostname-override). */
  name: string;
  /** The cgroup root's name, unique on the machine ("weft-kube-<pid>-<hex>-n1"). */
  cgroupName: string;
  kubeconfig: string;
  clientCa: string;
  /** Image archives imported into containerd's k8s.io namespace (one of them holds sandboxImage). */
  images: string[];
  sandboxImage: string;
  /** kubelet's clusterDNS (kube-dns's ClusterIP), when the cluster runs DNS. */
  clusterDns?: string;
}

function alive(p: ChildProcess | undefined): p is ChildProcess {
  return p !== undefined && p.exitCode === null && p.signalCode === null;
}

/** A kubelet + containerd node; the daemons run in the node's network and private mount namespaces. */
export class KubeNode {
  readonly root: string;
  private holder: ChildProcess | undefined;
  private containerd: ChildProcess | undefined;
  private kubelet: ChildProcess | undefined;
  private destroyed = false;

  constructor(readonly o: KubeNodeOptions) {
    this.root = join(o.sim.dir, 'kube-node');
  }

  get name(): string {
    return this.o.name;
  }

  get ip(): string {
    return this.o.sim.ip;
  }

  get netns(): string {
    return this.o.sim.netns;
  }

  /** The node's CNI bin and conf dirs as seen from the machine (the node's /opt/cni/bin, /etc/cni/net.d). */
  get cniBinDir(): string {
    return join(this.root, 'cni-bin');
  }

  get cniConfDir(): string {
    return join(this.root, 'cni-conf');
  }

  /** The node's /var/lib and /run as seen from the machine (host-local's data, subnet.env). */
  get varLib(): string {
    return join(this.root, 'varlib');
  }

  get runDir(): string {
    return join(this.root, 'run');
  }

  get kubeletLog(): string {
    return join(this.root, 'kubelet.log');
  }

  /** Builds the holder, starts containerd (images imported) and the kubelet; `progress` gets timings. */
  async start(progress: (m: string) => void = () => undefined): Promise<void> {
    const t0 = Date.now();
    for (const d of nodeDirs(this.root)) mkdirSync(d, { recursive: true });
    for (const [f, v] of Object.entries(FAKE_SYSCTLS)) writeFileSync(join(this.root, 'fake-sysctl', f.replace('/', '_')), `${v}\n`);
    setupCgroupRoot(this.o.cgroupName);
    this.holder = this.spawnLogged('holder', ['nsenter', `--net=${this.o.sim.path}`, 'unshare', '--mount', '--propagation', 'private', 'sh', '-c', holderScript(this.root)]);
    for (const end = Date.now() + 10_000; !existsSync(join(this.root, 'ready'));) {
      if (!alive(this.holder)) throw new Error(`${this.name}: the holder exited: ${this.readLog('holder')}`);
      if (Date.now() > end) throw new Error(`${this.name}: the holder is not ready after 10 s`);
      await new Promise((res) => setTimeout(res, 20));
    }
    writeFileSync(join(this.root, 'containerd.toml'), containerdConfig(this.o.sandboxImage));
    this.containerd = this.spawnLogged('containerd', this.inNode(['containerd', '--config', join(this.root, 'containerd.toml'), '--log-level', 'warn']));
    for (const end = Date.now() + 30_000; ;) {
      if (!alive(this.containerd)) throw new Error(`${this.name}: containerd exited: ${this.readLog('containerd').slice(-2000)}`);
      if (existsSync(join(this.runDir, 'containerd', 'containerd.sock')) && (await this.exec(['ctr', 'version'])).code === 0) break;
      if (Date.now() > end) throw new Error(`${this.name}: containerd not up after 30 s: ${this.readLog('containerd').slice(-2000)}`);
      await new Promise((res) => setTimeout(res, 100));
    }
    for (const img of this.o.images) {
      const r = await this.exec(['ctr', '-n', 'k8s.io', 'images', 'import', '--snapshotter', 'native', img], 180_000);
      if (r.code !== 0) throw new Error(`${this.name}: ctr images import ${img} failed (${r.code}): ${r.stderr.trim()}`);
    }
    progress(`${this.name}: holder + containerd + ${this.o.images.length} images (${Date.now() - t0} ms)`);
    writeFileSync(join(this.root, 'kubelet.yaml'), kubeletConfig({ cgroupRoot: `/${this.o.cgroupName}`, address: this.ip, clientCa: this.o.clientCa,
      ...(this.o.clusterDns !== undefined ? { clusterDns: this.o.clusterDns } : {}) }));
    this.startKubelet();
  }

  /** (Re)starts the kubelet. */
  startKubelet(): void {
    if (alive(this.kubelet)) throw new Error(`${this.name}: kubelet already running`);
    this.kubelet = this.spawnLogged('kubelet', this.inNode([join(KUBE_BIN_DIR, 'kubelet'), '--config', join(this.root, 'kubelet.yaml'),
      '--kubeconfig', this.o.kubeconfig, '--hostname-override', this.name, '--node-ip', this.ip, '--v', '2']));
  }

  /** Whether the kubelet process is alive. */
  kubeletRunning(): boolean {
    return alive(this.kubelet);
  }

  /** argv running `cmd` in the node's network and mount namespaces (the holder's). */
  inNode(cmd: readonly string[]): string[] {
    const pid = this.holder?.pid;
    if (pid === undefined) throw new Error(`${this.name}: no holder`);
    return ['nsenter', '-t', String(pid), '--net', '--mount', ...cmd];
  }

  /** Runs `cmd` inside the node (its /run, /var/lib, CNI dirs); never rejects on exit. */
  exec(cmd: readonly string[], timeoutMs = 60_000): Promise<ExecResult> {
    return run(this.inNode(cmd), { timeoutMs });
  }

  /** crictl against the node's containerd. */
  crictl(args: readonly string[], timeoutMs = 60_000): Promise<ExecResult> {
    return this.exec([CRICTL, '-r', 'unix:///run/containerd/containerd.sock', ...args], timeoutMs);
  }

  /** Starts `cmd` inside the node (net + mount namespaces), its output in <root>/<name>.log; killed by destroySync() with the rest of the node. */
  spawnInNode(name: string, cmd: readonly string[]): ChildProcess {
    return this.spawnLogged(name, this.inNode(cmd));
  }

  private spawnLogged(name: string, argv: string[]): ChildProcess {
    const out = openSync(join(this.root, `${name}.log`), 'a');
    const child = spawn(argv[0] ?? 'nsenter', argv.slice(1), { stdio: ['ignore', out, out] });
    closeSync(out);
    return child;
  }

  /** A daemon's log so far ('kubelet', 'containerd', 'holder'). */
  readLog(name: string): string {
    try {
      return readFileSync(join(this.root, `${name}.log`), 'utf8');
    } catch {
      return '';
    }
  }

  /** SIGKILLs the kubelet (an outage; pods keep running); resolves when it is gone. */
  async killKubelet(): Promise<void> {
    const k = this.kubelet;
    if (!alive(k)) return;
    const closed = new Promise((res) => k.once('close', res));
    k.kill('SIGKILL');
    await closed;
  }

  /**
   * Teardown in the order that leaves nothing: the kubelet; every process of the holder's mount
   * namespace (containerd, shims); every process of the node's cgroups (the pods); the holder (its
   * mounts vanish with it); the cgroup tree. Idempotent, synchronous (exit hooks).
   */
  destroySync(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    if (alive(this.kubelet)) this.kubelet.kill('SIGKILL');
    const hpid = this.holder?.pid;
    const mntOf = (pid: string): string => {
      try {
        return readlinkSync(`/proc/${pid}/ns/mnt`);
      } catch {
        return '';
      }
    };
    if (hpid !== undefined && alive(this.holder)) {
      const mnt = mntOf(String(hpid));
      for (const p of readdirSync('/proc').filter((p) => /^\d+$/.test(p) && Number(p) !== hpid)) {
        if (mnt !== '' && mntOf(p) === mnt) kill(Number(p));
      }
    }
    for (const p of cgroupPids(this.o.cgroupName)) kill(p);
    if (alive(this.holder)) this.holder.kill('SIGKILL');
    teardownCgroupRoot(this.o.cgroupName);
    // The holder's mounts are gone with its namespace; what remains is plain files (as root, all removable).
    rmSync(join(this.root, 'varlib'), { recursive: true, force: true });
  }
}

function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* gone */
  }
}
