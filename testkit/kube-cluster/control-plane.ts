// The control plane of a test Kubernetes cluster, in its own namespace on the underlay (never the
// machine's root namespace): etcd on that namespace's loopback, kube-apiserver with client-cert,
// Node and RBAC authorization, kube-controller-manager allocating node pod CIDRs, kube-scheduler.
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KUBE_BIN_DIR as CACHED_KUBE_BIN_DIR } from '../kube-apiserver.ts';
import { nsExec, type ExecResult, type Topology } from '../topology.ts';
import { formatCertKubeconfig, setupCerts, type ClientCert, type ClusterCerts } from './certs.ts';

/** The Kubernetes binaries: scripts/kube-setup.sh's cache, or WEFT_KUBE_BIN_DIR (binaries built elsewhere, same version). */
export const KUBE_BIN_DIR = process.env.WEFT_KUBE_BIN_DIR ?? CACHED_KUBE_BIN_DIR;

/** The binaries scripts/kube-setup.sh builds that a kube cluster needs. */
export const KUBE_CLUSTER_BINARIES = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubelet'] as const;

/** The first missing binary of KUBE_CLUSTER_BINARIES (a skip reason), or undefined. */
export function missingKubeBinary(): string | undefined {
  return KUBE_CLUSTER_BINARIES.map((b) => join(KUBE_BIN_DIR, b)).find((f) => !existsSync(f));
}

/** Cluster-wide ranges (kube-controller-manager's --cluster-cidr = the DaemonSet's Network). */
export interface ClusterRanges {
  clusterCidr: string;
  serviceCidr: string;
  /** The `kubernetes` Service's ClusterIP (first address of serviceCidr). */
  apiServiceIp: string;
}

/** etcd, kube-apiserver, kube-controller-manager and kube-scheduler of one cluster. */
export class ControlPlane {
  private readonly procs = new Map<string, ChildProcess>();

  private constructor(private readonly topo: Topology, readonly netns: string, readonly ip: string, readonly dir: string,
    readonly certs: ClusterCerts, readonly ranges: ClusterRanges) {}

  /** https://IP:6443 */
  get url(): string {
    return `https://${this.ip}:6443`;
  }

  /** The admin kubeconfig (O=system:masters), for kubectl. */
  get kubeconfig(): string {
    return join(this.dir, 'admin.kubeconfig');
  }

  /** Adds namespace `<prefix>-api` at `ip`, makes the certificates, starts the four daemons; resolves when the API is ready. */
  static async create(topo: Topology, ip: string, ranges: ClusterRanges, progress: (m: string) => void = () => undefined): Promise<ControlPlane> {
    const host = await topo.addUnderlayHost('api', ip);
    const dir = join(topo.dir, 'control-plane');
    mkdirSync(dir, { recursive: true });
    const t0 = Date.now();
    const certs = await setupCerts(dir, [ip, ranges.apiServiceIp, '127.0.0.1']);
    progress(`certificates made (${Date.now() - t0} ms)`);
    const cp = new ControlPlane(topo, host.netns, ip, dir, certs, ranges);
    writeFileSync(cp.kubeconfig, formatCertKubeconfig(cp.url, certs.ca, certs.admin));
    cp.startEtcd();
    const t1 = Date.now();
    cp.startApiServer();
    await cp.waitReady();
    progress(`etcd + kube-apiserver ready (${Date.now() - t1} ms)`);
    cp.startControllerManager();
    cp.startScheduler();
    return cp;
  }

  /** Writes a kubeconfig for `user` named `<name>.kubeconfig` in the control plane's dir; returns its path. */
  writeKubeconfig(name: string, user: ClientCert): string {
    const file = join(this.dir, `${name}.kubeconfig`);
    writeFileSync(file, formatCertKubeconfig(this.url, this.certs.ca, user));
    return file;
  }

  private spawn(name: string, argv: string[]): void {
    this.procs.set(name, this.topo.spawnIn(this.netns, argv, join(this.dir, `${name}.log`)));
  }

  private startEtcd(): void {
    this.spawn('etcd', [join(KUBE_BIN_DIR, 'etcd'), '--name', 'kube', '--data-dir', join(this.dir, 'etcd'),
      '--listen-client-urls', 'http://127.0.0.1:2379', '--advertise-client-urls', 'http://127.0.0.1:2379',
      '--listen-peer-urls', 'http://127.0.0.1:2380', '--initial-advertise-peer-urls', 'http://127.0.0.1:2380',
      '--initial-cluster', 'kube=http://127.0.0.1:2380', '--log-level', 'error']);
  }

  private startApiServer(): void {
    const c = this.certs;
    this.spawn('kube-apiserver', [join(KUBE_BIN_DIR, 'kube-apiserver'),
      '--etcd-servers', 'http://127.0.0.1:2379', '--bind-address', this.ip, '--advertise-address', this.ip, '--secure-port', '6443',
      '--tls-cert-file', c.apiserver.cert, '--tls-private-key-file', c.apiserver.key, '--cert-dir', join(this.dir, 'certs'),
      '--client-ca-file', c.ca, '--authorization-mode', 'Node,RBAC', '--enable-admission-plugins', 'NodeRestriction',
      '--kubelet-client-certificate', c.apiserverKubelet.cert, '--kubelet-client-key', c.apiserverKubelet.key,
      // Node names do not resolve here: reach kubelets (logs, exec, probes' proxy) by their InternalIP.
      '--kubelet-preferred-address-types', 'InternalIP,Hostname',
      '--service-account-issuer', 'https://kubernetes.default.svc', '--service-account-signing-key-file', c.saKey,
      '--service-account-key-file', c.saPub, '--service-cluster-ip-range', this.ranges.serviceCidr, '--v', '1']);
  }

  private startControllerManager(): void {
    const c = this.certs;
    const kc = this.writeKubeconfig('kube-controller-manager', c.controllerManager);
    this.spawn('kube-controller-manager', [join(KUBE_BIN_DIR, 'kube-controller-manager'),
      '--kubeconfig', kc, '--authentication-kubeconfig', kc, '--authorization-kubeconfig', kc, '--bind-address', '127.0.0.1',
      '--leader-elect=false', '--use-service-account-credentials', '--service-account-private-key-file', c.saKey,
      '--root-ca-file', c.ca, '--cluster-signing-cert-file', c.ca, '--cluster-signing-key-file', c.caKey,
      '--allocate-node-cidrs', '--cluster-cidr', this.ranges.clusterCidr, '--node-cidr-mask-size', '24',
      '--service-cluster-ip-range', this.ranges.serviceCidr, '--v', '1']);
  }

  private startScheduler(): void {
    const kc = this.writeKubeconfig('kube-scheduler', this.certs.scheduler);
    this.spawn('kube-scheduler', [join(KUBE_BIN_DIR, 'kube-scheduler'), '--kubeconfig', kc, '--authentication-kubeconfig', kc,
      '--authorization-kubeconfig', kc, '--bind-address', '127.0.0.1', '--leader-elect=false', '--v', '1']);
  }

  private async waitReady(): Promise<void> {
    const end = Date.now() + 120_000;
    for (;;) {
      const r = await this.curl('GET', '/readyz');
      if (r.code === 0 && r.stdout.trim() === 'ok') return;
      const api = this.procs.get('kube-apiserver');
      if (api?.exitCode !== null) throw new Error(`kube-apiserver exited with ${String(api?.exitCode)} (see ${this.dir}/kube-apiserver.log)`);
      if (Date.now() > end) throw new Error(`kube-apiserver not ready after 120 s: ${r.stdout} ${r.stderr}`);
      await new Promise((res) => setTimeout(res, 250));
    }
  }

  /** One API call as admin with curl inside the control plane's namespace; never rejects on exit. */
  curl(method: string, path: string, body?: unknown): Promise<ExecResult> {
    const c = this.certs;
    const args = ['curl', '-sS', '--max-time', '10', '--cacert', c.ca, '--cert', c.admin.cert, '--key', c.admin.key, '-X', method];
    if (body !== undefined) args.push('-H', `Content-Type: ${method === 'PATCH' ? 'application/merge-patch+json' : 'application/json'}`, '--data-binary', '@-');
    return nsExec(this.netns, [...args, `${this.url}${path}`], body !== undefined ? { input: JSON.stringify(body) } : {});
  }

  /** An API call that must succeed; returns the decoded body. */
  async call<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> {
    let r = await this.curl(method, path, body);
    // A GET that timed out or lost its connection (curl 7, 28, 52, 56) is asked again: on a machine
    // at load 50 the API server sometimes answers after curl's 10 s. Writes are never repeated.
    for (let i = 0; i < 3 && method === 'GET' && [7, 28, 52, 56].includes(r.code); i++) r = await this.curl(method, path, body);
    let out: Record<string, unknown>;
    try {
      out = JSON.parse(r.stdout || '{}') as Record<string, unknown>;
    } catch {
      throw new Error(`kube ${method} ${path}: not JSON: ${r.stdout.slice(0, 500)} ${r.stderr}`);
    }
    if (r.code !== 0 || out.kind === 'Status' && out.status === 'Failure') throw new Error(`kube ${method} ${path}: ${r.stdout} ${r.stderr}`);
    return out as T;
  }

  /** Kills the daemons: kube-apiserver before etcd (an apiserver without etcd retries for long). */
  stopSync(): void {
    for (const name of ['kube-scheduler', 'kube-controller-manager', 'kube-apiserver', 'etcd']) {
      const p = this.procs.get(name);
      if (p && p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    }
  }
}
