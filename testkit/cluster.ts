// A simulated flannel-style cluster on one machine, for the end-to-end tests, benchmarks and the
// demo: topology (underlay + node namespaces) + weftd per node + pods wired by the real plugin
// binaries, for a chosen backend (vxlan | host-gw | udp) and lease store (file | etcd). Everything is
// created inside namespaces the harness owns and removed by destroy() (also on exit and Ctrl-C).
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CniRunner, type ConfList } from './cni-runner.ts';
import { formatCidr, parseCidr } from '../lib/ip/index.ts';
import { EtcdServer } from './etcd.ts';
import { KubeApiServer } from './kube-apiserver.ts';
import { Topology, nsExec, type SimNode, type SimPod } from './topology.ts';
import { waitFor } from './wait.ts';

/** The poll helper, also reached through this module by the tests and benches that use the cluster. */
export { waitFor };

const ROOT = join(import.meta.dirname, '..');
/** The flannel plugin executable of each backend. */
const PLUGIN: Record<ClusterOptions['backend'], string> = { vxlan: 'flannel-vxlan', 'host-gw': 'host-gw', udp: 'flannel-udp' };

/** What Cluster.create builds. */
export interface ClusterOptions {
  backend: 'vxlan' | 'host-gw' | 'udp';
  /** 'kube': a real kube-apiserver, a Node per node (podCIDR 10.x.<id>.0/24 of the Network), weftd --kube-subnet-mgr. */
  store: 'file' | 'etcd' | 'kube';
  nodes?: number;
  podsPerNode?: number;
  /** Cluster Network (default 10.244.0.0/16). */
  network?: string;
  /**
   * Dual stack: the IPv6Network of net-conf.json (EnableIPv6 true); nodes get IPv6 underlay addresses
   * (2001:db8:2::<10 + id>/64) and pods an address of each family.
   */
  ipv6Network?: string;
  /** With ipv6Network: IPv6-only (EnableIPv4 false): pods get only an IPv6 address (ClusterPod.ip is it), kube nodes an IPv6 podCIDR. */
  ipv6Only?: boolean;
  /** Built binaries (default dist/bin of the repository; a standalone bin dir works the same). */
  binDir?: string;
  /** A command prefix for every plugin and weftd run, outside `ip netns exec` (e.g. the no-Node.js wrapper). */
  wrap?: string[];
  ipMasq?: boolean;
  /** Chain portmap after the flannel plugin, as conf/ does (default false: it is another issue's plugin). */
  portmap?: boolean;
  /** Extra keys of net-conf.json's Backend section (e.g. { DirectRouting: true }). */
  backendConf?: Record<string, unknown>;
  /** etcd store only: put net-conf.json at <prefix>/config and start weftd without --net-conf (flannel's way). */
  netConfInEtcd?: boolean;
  /** 'flannel': wire pods with conf/10-flannel.conflist (flannel's own type, what `weft install` writes) instead of the backend's executable. */
  conflist?: 'backend' | 'flannel';
  /** Keys merged into the flannel plugin's delegate (e.g. { ipMasq: false } for a NAT-free data plane). */
  delegate?: Record<string, unknown>;
  /** Extra weftd flags for every node. */
  weftdArgs?: string[];
  /**
   * Mixed cluster: these nodes (ids from 1) run the real flanneld `bin` (etcd store with the net-conf in
   * etcd, or kube store with --kube-subnet-mgr and the net-conf file) instead of weftd, and wire pods with weft's `flannel` executable delegating to the
   * reference bridge and host-local of `referenceDir`; with `cniBin`, flannel's own CNI plugin instead
   * of weft's `flannel` (it speaks CNI up to 0.4.0, so those nodes' conflist says 0.4.0).
   */
  flanneld?: { bin: string; nodes: number[]; args?: string[]; referenceDir?: string; cniBin?: string };
  onProgress?: (msg: string) => void;
}

/** A node with its weftd and CNI runner. */
export interface ClusterNode extends SimNode {
  subnetFile: string;
  runner: CniRunner;
  weftd?: ChildProcess;
  /** The real flanneld, on the nodes ClusterOptions.flanneld names. */
  flanneld?: ChildProcess;
  /** The node's lease subnet once weftd wrote subnet.env ("10.244.3.0/24"). */
  subnet?: string;
  /** Its IPv6 lease subnet on a dual-stack cluster ("fd00:10:244:3::/64"). */
  subnet6?: string;
}

/** A pod wired by the conflist, with its address. */
export interface ClusterPod extends SimPod {
  containerId: string;
  /** The pod's eth0 address ("10.244.3.2"). */
  ip: string;
  /** Its IPv6 address on a dual-stack cluster. */
  ip6?: string;
  node: ClusterNode;
}


/** The /24 of `network` a kube node gets (what kube-controller-manager's --cluster-cidr would assign): index id. */
export function kubePodCidr(network: string, id: number): string {
  const [a, b] = network.split('.');
  return `${a}.${b}.${id}.0/24`;
}

/** The /64 of an IPv6 network a kube node gets: index id ("fd00:10:244::/56", 3 -> "fd00:10:244:3::/64"). */
export function kubePodCidr6(network6: string, id: number): string {
  const c = parseCidr(network6);
  if (c === null || c.addr.family !== 6) throw new Error(`${network6} is not an IPv6 network`);
  return formatCidr({ addr: { family: 6, value: c.addr.value + (BigInt(id) << 64n) }, prefix: 64 });
}

/** A running simulated cluster. */
export class Cluster {
  readonly nodes: ClusterNode[] = [];
  readonly pods: ClusterPod[] = [];
  etcd: EtcdServer | undefined;
  kube: KubeApiServer | undefined;
  readonly netConfPath: string;
  readonly leaseDir: string;
  private readonly binDir: string;

  private constructor(readonly topo: Topology, readonly opts: ClusterOptions) {
    this.binDir = opts.binDir ?? join(ROOT, 'dist', 'bin');
    this.netConfPath = join(topo.dir, 'net-conf.json');
    this.leaseDir = join(topo.dir, 'leases');
  }

  /** Builds the cluster: namespaces, etcd (if chosen), weftd on every node, then the pods. */
  static async create(opts: ClusterOptions): Promise<Cluster> {
    const progress = opts.onProgress ?? (() => undefined);
    for (const b of [opts.conflist === 'flannel' ? 'flannel' : PLUGIN[opts.backend], 'bridge', 'host-local', 'weftd']) {
      if (!existsSync(join(opts.binDir ?? join(ROOT, 'dist', 'bin'), b))) throw new Error(`dist/bin/${b} is missing: run npm run build`);
    }
    const topo = await Topology.create({ nodes: opts.nodes ?? 3, ipv6: opts.ipv6Network !== undefined });
    const c = new Cluster(topo, opts);
    try {
      progress(`topology ${topo.prefix}: ${topo.nodes.length} nodes on ${topo.underlay}`);
      const v4 = opts.ipv6Only === true ? { EnableIPv4: false } : { Network: opts.network ?? '10.244.0.0/16' };
      const netConf = JSON.stringify({
        ...v4, ...(opts.ipv6Network !== undefined ? { EnableIPv6: true, IPv6Network: opts.ipv6Network } : {}),
        Backend: { Type: opts.backend, ...opts.backendConf },
      });
      writeFileSync(c.netConfPath, netConf);
      mkdirSync(c.leaseDir, { recursive: true });
      if (opts.store === 'etcd') {
        c.etcd = await EtcdServer.create(topo);
        progress(`etcd at ${c.etcd.url}`);
        if (opts.netConfInEtcd) await c.etcd.put('/coreos.com/network/config', netConf);
      }
      if (opts.store === 'kube') {
        c.kube = await KubeApiServer.create(topo);
        progress(`kube-apiserver at ${c.kube.url}`);
        for (const n of topo.nodes) {
          await c.kube.createNode(n.netns, opts.ipv6Only === true ? kubePodCidr6(opts.ipv6Network ?? '', n.id) : kubePodCidr(opts.network ?? '10.244.0.0/16', n.id));
        }
      }
      for (const n of topo.nodes) c.nodes.push({ ...n, subnetFile: join(n.dir, 'subnet.env'), runner: c.runnerFor(n) });
      await Promise.all(c.nodes.map((n) => (c.runsFlanneld(n) ? c.startFlanneld(n) : c.startWeftd(n))));
      progress(`weftd running on ${c.nodes.map((n) => `${n.netns}=${n.subnet ?? '?'}`).join(', ')}`);
      for (const n of c.nodes) {
        for (let i = 1; i <= (opts.podsPerNode ?? 2); i++) await c.addPod(n, i);
      }
      progress(`${c.pods.length} pods: ${c.pods.map((p) => `${p.name}=${p.ip}`).join(', ')}`);
      return c;
    } catch (e) {
      c.destroy();
      throw e;
    }
  }

  /** The node's conflist (from conf/) with per-node paths, so nodes sharing one machine never share files. */
  private runnerFor(n: SimNode): CniRunner {
    const file = join(ROOT, 'conf', this.opts.conflist === 'flannel' || this.runsFlanneld(n) ? '10-flannel.conflist' : `weft-${this.opts.backend}.conflist`);
    const conf = JSON.parse(readFileSync(file, 'utf8')) as ConfList;
    const plugins = conf.plugins.filter((p) => p.type !== 'portmap' || this.opts.portmap === true).map((p) =>
      p.type === 'portmap' ? p : {
        ...p, subnetFile: join(n.dir, 'subnet.env'), dataDir: join(n.dir, 'flannel'), ipam: { dataDir: join(n.dir, 'ipam') },
        delegate: { ...(p['delegate'] as Record<string, unknown> | undefined), ...this.opts.delegate },
      });
    const cniVersion = this.runsFlanneld(n) && this.opts.flanneld?.cniBin !== undefined ? '0.4.0' : conf.cniVersion;
    return new CniRunner({ ...conf, cniVersion, plugins }, { binDirs: [this.runsFlanneld(n) ? this.referenceBinDir(n) : this.binDir], nodeNetns: n.netns, ...(this.opts.wrap ? { wrap: this.opts.wrap } : {}) });
  }

  /** True when the node runs flanneld (ClusterOptions.flanneld). */
  runsFlanneld(n: SimNode): boolean {
    return this.opts.flanneld?.nodes.includes(n.id) === true;
  }

  /** A per-node CNI bin dir: weft's `flannel` in front of the reference bridge, host-local and loopback. */
  private referenceBinDir(n: SimNode): string {
    const dir = join(n.dir, 'cni-bin');
    const ref = this.opts.flanneld?.referenceDir ?? '/usr/lib/cni';
    mkdirSync(dir, { recursive: true });
    for (const [name, target] of [['flannel', this.opts.flanneld?.cniBin ?? join(this.binDir, 'flannel')], ['bridge', join(ref, 'bridge')], ['host-local', join(ref, 'host-local')], ['loopback', join(ref, 'loopback')]] as const) {
      if (!existsSync(join(dir, name))) symlinkSync(target, join(dir, name));
    }
    return dir;
  }

  /** flanneld's command line for a node (its defaults otherwise: no --ip-masq, vxlan port 8472). */
  flanneldArgv(n: ClusterNode): string[] {
    const f = this.opts.flanneld;
    if (!f || !(this.etcd || this.kube)) throw new Error('flanneld nodes need ClusterOptions.flanneld and the etcd or kube store');
    // kube: the Node named after the namespace, the same kubeconfig and net-conf file as weftd's.
    const source = this.kube
      ? ['env', `NODE_NAME=${n.netns}`, f.bin, '--kube-subnet-mgr', '--kubeconfig-file', this.kube.kubeconfig, '--net-config-path', this.netConfPath]
      : [f.bin, '--etcd-endpoints', (this.etcd as EtcdServer).url];
    return [...source, '--iface', n.uplink, '--subnet-file', n.subnetFile, '--healthz-ip', '127.0.0.1', '--healthz-port', '9102', ...(f.args ?? [])];
  }

  /** Starts flanneld on a node (log in <node dir>/flanneld.log) and waits for its subnet.env. */
  async startFlanneld(n: ClusterNode): Promise<void> {
    n.flanneld = this.topo.spawnIn(n.netns, this.flanneldArgv(n), join(n.dir, 'flanneld.log'));
    const proc = n.flanneld;
    await waitFor(`flanneld on ${n.netns}`, () => {
      if (proc.exitCode !== null) throw new Error(`flanneld on ${n.netns} exited with ${proc.exitCode}: ${this.flanneldLog(n).slice(-2000)}`);
      return existsSync(n.subnetFile);
    }, 30_000, 100);
    this.readSubnet(n);
  }

  /** Stops flanneld (SIGTERM: it leaves its lease, devices and routes, like weftd). */
  async stopFlanneld(n: ClusterNode): Promise<void> {
    const p = n.flanneld;
    delete n.flanneld;
    if (!p || p.exitCode !== null) return;
    const closed = new Promise((res) => p.once('close', res));
    p.kill('SIGTERM');
    await closed;
  }

  /** The node's flanneld log so far. */
  flanneldLog(n: SimNode): string {
    try { return readFileSync(join(n.dir, 'flanneld.log'), 'utf8'); } catch { return ''; }
  }

  private readSubnet(n: ClusterNode): void {
    const text = readFileSync(n.subnetFile, 'utf8');
    const m = /FLANNEL_SUBNET=([0-9.]+)\.[0-9]+\/([0-9]+)/.exec(text);
    if (m) n.subnet = `${m[1]}.0/${m[2]}`;
    // FLANNEL_IPV6_SUBNET is the gateway form too ("fd00:10:244:3::1/64"): the network drops the final 1.
    const m6 = /FLANNEL_IPV6_SUBNET=([0-9a-f:]+:)1\/([0-9]+)/.exec(text);
    if (m6) n.subnet6 = `${m6[1]}/${m6[2]}`;
  }

  /** weftd's command line for a node. */
  weftdArgv(n: ClusterNode): string[] {
    if (this.kube) {
      return ['env', `NODE_NAME=${n.netns}`, join(this.binDir, 'weftd'), '--kube-subnet-mgr', '--kubeconfig-file', this.kube.kubeconfig,
        '--net-config-path', this.netConfPath, '--iface', n.uplink, '--subnet-file', n.subnetFile, '--metrics-addr', '127.0.0.1:9101',
        ...(this.opts.ipMasq ? ['--ip-masq'] : []), ...(this.opts.weftdArgs ?? [])];
    }
    const store = this.etcd ? ['--etcd-endpoints', this.etcd.url] : ['--store', `file:${this.leaseDir}`];
    const conf = this.etcd && this.opts.netConfInEtcd ? [] : ['--net-conf', this.netConfPath];
    return [join(this.binDir, 'weftd'), ...conf, ...store, '--iface', n.uplink, '--subnet-file', n.subnetFile,
      '--metrics-addr', '127.0.0.1:9101', ...(this.opts.ipMasq ? ['--ip-masq'] : []), ...(this.opts.weftdArgs ?? [])];
  }

  /** Starts weftd on a node (log in <node dir>/weftd.log) and waits until /healthz answers 200. */
  async startWeftd(n: ClusterNode, extraArgs: string[] = []): Promise<void> {
    n.weftd = this.topo.spawnIn(n.netns, [...this.weftdArgv(n), ...extraArgs], join(n.dir, 'weftd.log'), this.opts.wrap);
    const proc = n.weftd;
    await waitFor(`weftd on ${n.netns}`, async () => {
      if (proc.exitCode !== null) throw new Error(`weftd on ${n.netns} exited with ${proc.exitCode}: ${this.weftdLog(n).slice(-2000)}`);
      return (await nsExec(n.netns, ['curl', '-fsS', '--max-time', '1', 'http://127.0.0.1:9101/healthz'])).code === 0;
    }, 60_000, 100); // generous: a loaded machine starts Node slowly; a weftd that fails exits and is reported at once
    this.readSubnet(n);
  }

  /** Sends `signal` to weftd and resolves with its exit code. */
  async stopWeftd(n: ClusterNode, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    const p = n.weftd;
    if (!p || p.exitCode !== null) return p?.exitCode ?? null;
    const closed = new Promise<number | null>((res) => p.once('close', (code) => res(code)));
    p.kill(signal);
    const code = await closed;
    delete n.weftd;
    return code;
  }

  /** The node's weftd log so far. */
  weftdLog(n: SimNode): string {
    try { return readFileSync(join(n.dir, 'weftd.log'), 'utf8'); } catch { return ''; }
  }

  /** weftd's /metrics of a node, as name{labels} -> value. */
  async metrics(n: ClusterNode): Promise<Map<string, number>> {
    const r = await nsExec(n.netns, ['curl', '-fsS', '--max-time', '2', 'http://127.0.0.1:9101/metrics']);
    const out = new Map<string, number>();
    for (const line of r.stdout.split('\n')) {
      const m = /^([a-z_]+(?:\{[^}]*\})?) (\S+)$/.exec(line);
      if (m) out.set(m[1] as string, Number(m[2]));
    }
    return out;
  }

  /** Creates a pod namespace on the node and wires it with the conflist (ADD through the real binaries). */
  async addPod(n: ClusterNode, index: number): Promise<ClusterPod> {
    return this.wirePod(await this.topo.addPod(n, index));
  }

  /** Wires a pod namespace made by topo.addPod with the node's conflist (ADD only: what a runtime waits for). */
  async wirePod(sim: SimPod): Promise<ClusterPod> {
    const n = this.nodes.find((x) => x.id === sim.node.id);
    if (n === undefined) throw new Error(`pod ${sim.name} is on no node of this cluster`);
    const containerId = `${this.topo.prefix}-${sim.name}`;
    const res = await n.runner.add({ containerId, netns: sim.path, ifName: 'eth0' });
    const ips = (res['ips'] as Array<{ address: string }> | undefined)?.map((x) => x.address.split('/')[0] ?? '') ?? [];
    const ip6 = ips.find((a) => a.includes(':'));
    const ip = this.opts.ipv6Only === true ? ip6 : ips.find((a) => !a.includes(':'));
    if (ip === undefined) throw new Error(`ADD for ${sim.name} returned no IP: ${JSON.stringify(res)}`);
    if (this.opts.ipv6Network !== undefined && ip6 === undefined) throw new Error(`ADD for ${sim.name} returned no IPv6 address: ${JSON.stringify(res)}`);
    const pod: ClusterPod = { ...sim, node: n, containerId, ip, ...(ip6 !== undefined ? { ip6 } : {}) };
    this.pods.push(pod);
    return pod;
  }

  /** DEL of a pod through the conflist (its namespace stays until destroy). */
  async delPod(p: ClusterPod): Promise<void> {
    await p.node.runner.del({ containerId: p.containerId, netns: p.path, ifName: 'eth0' });
    this.pods.splice(this.pods.indexOf(p), 1);
  }

  /** Leaves the cluster running after this process exits (demo --keep). */
  detach(): void {
    this.topo.detach();
  }

  /** Kills weftd and etcd, deletes every namespace and file of the cluster. Idempotent. */
  destroy(): void {
    this.topo.destroySync();
  }
}
