// A real Kubernetes cluster on one machine for tests and the demo: an underlay with a control-plane
// namespace (etcd, kube-apiserver, kube-controller-manager, kube-scheduler) and N kubelet +
// containerd nodes, each in its own network namespace with a private mount namespace and cgroup
// root. No CNI is installed: nodes register NotReady until something (weft's DaemonSet) writes one.
// The sandbox image is a locally built pause (scripts/pause-image.sh); cluster DNS (CoreDNS as
// kube-dns) and weftd's Service proxy are options (testkit/kube-cluster/dns.ts, applyWeft()).
// Everything is removed by destroySync() in kubelet-notes.md's order, also at exit and on SIGINT/SIGTERM.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { IMAGE, IMAGE_TAR } from '../containerd.ts';
import { destroyAtExit } from '../exit-cleanup.ts';
import { run, type ExecResult } from '../exec.ts';
import { nsRun, Topology } from '../topology.ts';
import { nodeCert } from './certs.ts';
import { takeCensus, type Census } from './census.ts';
import { ControlPlane, type ClusterRanges } from './control-plane.ts';
import { CLUSTER_DNS_IP, clusterDnsMissing, deployClusterDns } from './dns.ts';
import { cachedImageArchive, PAUSE_IMAGE } from './image.ts';
import { WEFT_MANIFEST, weftManifestWith, type WeftdFeatures } from './manifest.ts';
import { KubeNode } from './node.ts';

/** Where scripts/kubectl-setup.sh unpacks Debian's kubectl. */
export const KUBECTL = join(process.env.WEFT_CACHE_DIR ?? '/var/cache/weft', 'kubectl-debian', 'current', 'usr', 'bin', 'kubectl');
/** The control plane's underlay address (nodes are 192.0.2.11, .12, ...). */
const API_IP = '192.0.2.3';

/** What KubeCluster.create builds. */
export interface KubeClusterOptions {
  nodes: number;
  /** Image archives imported into every node besides the busybox (workload) and pause (sandbox) ones. */
  images?: string[];
  ranges?: Partial<ClusterRanges>;
  /** false: no DNAT of the `kubernetes` Service in the nodes (a Service proxy under test programs it). Default true. */
  apiServiceDnat?: boolean;
  /**
   * Cluster DNS: the CoreDNS image imported and the kubelets' clusterDNS set to kube-dns's ClusterIP;
   * deployDns() starts it once a Service proxy runs (applyWeft({ serviceProxy: true })). Default false.
   */
  dns?: boolean;
  progress?: (msg: string) => void;
}

/** Node conditions as the API reports them. */
export interface NodeStatus {
  name: string;
  ready: boolean;
  reason: string;
  message: string;
  podCidr?: string;
}

/** The running cluster. */
export class KubeCluster {
  readonly nodes: KubeNode[] = [];
  private destroyed = false;
  private unregister: () => void = () => undefined;
  private readonly onSignal = (): void => this.destroySync();

  private constructor(readonly topo: Topology, readonly control: ControlPlane, readonly id: string) {}

  /** The busybox image: the workload image (busybox httpd); never pulled. */
  static readonly busyboxImage = IMAGE;

  /** Builds the cluster; on failure everything made so far is removed before the error is thrown. */
  static async create(o: KubeClusterOptions): Promise<KubeCluster> {
    const progress = o.progress ?? (() => undefined);
    const id = `${process.pid}-${randomBytes(3).toString('hex')}`;
    const ranges: ClusterRanges = { clusterCidr: '10.244.0.0/16', serviceCidr: '10.96.0.0/24', apiServiceIp: '10.96.0.1', ...o.ranges };
    const t0 = Date.now();
    if (o.dns === true) {
      const why = clusterDnsMissing();
      if (why !== undefined) throw new Error(`no cluster DNS: ${why}`);
    }
    const images = [IMAGE_TAR, await cachedImageArchive('pause-image.sh'), ...(o.dns === true ? [await cachedImageArchive('coredns-image.sh')] : []), ...(o.images ?? [])];
    const topo = await Topology.create({ nodes: o.nodes, prefix: `wk${randomBytes(2).toString('hex')}` });
    let cluster: KubeCluster | undefined;
    try {
      const control = await ControlPlane.create(topo, API_IP, ranges, progress);
      cluster = new KubeCluster(topo, control, id);
      cluster.hook();
      for (const sim of topo.nodes) {
        await cluster.wireNodeNetns(sim.netns, o.apiServiceDnat !== false);
        const name = sim.netns;
        const kubeconfig = control.writeKubeconfig(`node-${name}`, await nodeCert(control.certs, name));
        cluster.nodes.push(new KubeNode({ sim, name, cgroupName: `weft-kube-${id}-n${sim.id}`, kubeconfig, clientCa: control.certs.ca,
          images, sandboxImage: PAUSE_IMAGE, ...(o.dns === true ? { clusterDns: CLUSTER_DNS_IP } : {}) }));
      }
      await Promise.all(cluster.nodes.map((n) => n.start(progress)));
      await cluster.waitFor('every Node registered', async () => (await cluster?.nodeStatuses() ?? []).length === o.nodes, 120_000);
      progress(`${o.nodes} nodes registered (cluster built in ${Date.now() - t0} ms)`);
      return cluster;
    } catch (e) {
      if (cluster) cluster.destroySync();
      else topo.destroySync();
      throw e;
    }
  }

  /**
   * A node namespace's routes and the `kubernetes` Service: a default route to the control plane's
   * namespace (weftd's uplink is the default route's; nothing leaves the underlay), and a DNAT of
   * the Service's ClusterIP:443 to kube-apiserver, standing in for kube-proxy, which this cluster
   * does not run (in-cluster clients such as weftd dial KUBERNETES_SERVICE_HOST).
   */
  private async wireNodeNetns(netns: string, dnat: boolean): Promise<void> {
    const r = this.control.ranges;
    await nsRun(netns, ['ip', 'route', 'add', 'default', 'via', API_IP]);
    if (!dnat) return;
    const rules = [
      'table ip weft-kit-svc {',
      `  chain out { type nat hook output priority -100; ip daddr ${r.apiServiceIp} tcp dport 443 dnat to ${API_IP}:6443; }`,
      `  chain pre { type nat hook prerouting priority -100; ip daddr ${r.apiServiceIp} tcp dport 443 dnat to ${API_IP}:6443; }`,
      '}',
    ].join('\n');
    const res = await run(['ip', 'netns', 'exec', netns, 'nft', '-f', '-'], { input: rules, timeoutMs: 10_000 });
    if (res.code !== 0) throw new Error(`[${netns}] nft: ${res.stderr.trim()}`);
  }

  private hook(): void {
    this.unregister = destroyAtExit(this);
    // Before Topology's own handlers (registered earlier), which delete the node namespaces.
    for (const sig of ['SIGINT', 'SIGTERM'] as const) process.prependListener(sig, this.onSignal);
  }

  /**
   * `kubectl apply` of deploy/weft.yaml as users apply it, or with weftd's `f` turned on
   * (--service-proxy: weftd reaches the API server at its own address, as docs/services.md says).
   */
  async applyWeft(f: WeftdFeatures = {}): Promise<void> {
    if (f.serviceProxy !== true && f.networkPolicy !== true) {
      await this.mustKubectl(['apply', '-f', WEFT_MANIFEST]);
      return;
    }
    await this.mustKubectl(['apply', '-f', '-'], weftManifestWith({ apiServer: { host: this.control.ip, port: 6443 }, ...f }));
  }

  /** Starts CoreDNS as kube-dns (the cluster was created with `dns`); resolves with the ms until its pods are Ready. */
  deployDns(replicas = 2): Promise<number> {
    return deployClusterDns(this, replicas);
  }

  /** Runs Debian's kubectl as admin from inside the control plane's namespace; never rejects on exit. */
  kubectl(args: readonly string[], input?: string): Promise<ExecResult> {
    return run(['ip', 'netns', 'exec', this.control.netns, KUBECTL, '--kubeconfig', this.control.kubeconfig, ...args],
      { timeoutMs: 180_000, ...(input !== undefined ? { input } : {}) });
  }

  /** Like kubectl(), but throws with its stderr unless it exits 0; resolves with stdout. */
  async mustKubectl(args: readonly string[], input?: string): Promise<string> {
    const r = await this.kubectl(args, input);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr.trim()}`);
    return r.stdout;
  }

  /** Every Node's Ready condition and pod CIDR. */
  async nodeStatuses(): Promise<NodeStatus[]> {
    const list = await this.control.call<{ items: Array<{ metadata: { name: string }; spec: { podCIDR?: string };
      status: { conditions?: Array<{ type: string; status: string; reason?: string; message?: string }> } }> }>('GET', '/api/v1/nodes');
    return list.items.map((n) => {
      const c = n.status.conditions?.find((x) => x.type === 'Ready');
      return { name: n.metadata.name, ready: c?.status === 'True', reason: c?.reason ?? '', message: c?.message ?? '',
        ...(n.spec.podCIDR !== undefined ? { podCidr: n.spec.podCIDR } : {}) };
    });
  }

  /** Polls `pred` until true; throws naming `what` after `timeoutMs`; resolves with the ms it took. */
  async waitFor(what: string, pred: () => boolean | Promise<boolean>, timeoutMs = 60_000, everyMs = 200): Promise<number> {
    const t0 = Date.now();
    for (;;) {
      if (await pred()) return Date.now() - t0;
      if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await new Promise((res) => setTimeout(res, everyMs));
    }
  }

  /** The cgroup roots of the nodes (for the census). */
  get cgroupNames(): string[] {
    return this.nodes.map((n) => n.o.cgroupName);
  }

  /** What is left of this cluster on the machine (all lists empty after destroySync()). */
  census(): Census {
    return takeCensus(this.topo.prefix, this.topo.dir, this.cgroupNames);
  }

  /** Tears everything down: nodes (kubelet, containerd + shims, pods, holder, cgroups), control plane, namespaces, files. */
  destroySync(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.unregister();
    for (const sig of ['SIGINT', 'SIGTERM'] as const) process.removeListener(sig, this.onSignal);
    // Every step runs even when one before it throws: a half-done teardown is what leaks.
    const errors: unknown[] = [];
    for (const step of [...this.nodes.map((n) => () => n.destroySync()), () => this.control.stopSync(), () => this.topo.destroySync()]) {
      try {
        step();
      } catch (e) {
        errors.push(e);
      }
    }
    if (errors.length > 0) throw errors[0];
  }
}
