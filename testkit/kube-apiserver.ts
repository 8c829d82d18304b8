// A real kube-apiserver (with its own etcd 3.6) for a simulated cluster, in its own namespace on
// the underlay (never the machine's root namespace): certificates made here with openssl, a
// static token, the binaries built by scripts/kube-setup.sh. No controller-manager: the tests
// create Nodes with their podCIDRs through the API, as kube-controller-manager would.
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ExecResult, nsExec, nsRun, type Topology } from './topology.ts';

/** Where scripts/kube-setup.sh puts kube-apiserver and etcd. */
export const KUBE_BIN_DIR = join(process.env.WEFT_CACHE_DIR ?? '/var/cache/weft', 'go-bin', 'kube-v1.34.4');

/** True when the binaries are there (the tests skip with this reason otherwise). */
export function kubeBinariesPresent(): boolean {
  return existsSync(join(KUBE_BIN_DIR, 'kube-apiserver')) && existsSync(join(KUBE_BIN_DIR, 'etcd'));
}

const TOKEN = 'weft-test-token';

/** A running (or stopped) API server of one topology. */
export class KubeApiServer {
  private etcd: ChildProcess | undefined;
  private api: ChildProcess | undefined;

  private constructor(private readonly topo: Topology, readonly netns: string, readonly ip: string, readonly dir: string) {}

  /** https://IP:6443 */
  get url(): string {
    return `https://${this.ip}:6443`;
  }

  /** A kubeconfig for weftd, flanneld and kubectl, in the YAML layout kubeadm and `kubectl config` write. */
  get kubeconfig(): string {
    return join(this.dir, 'kubeconfig');
  }

  /** Adds namespace `<prefix>-kube` at `ip`, makes the certificates, starts etcd and the API server. */
  static async create(topo: Topology, ip = '192.0.2.3'): Promise<KubeApiServer> {
    const host = await topo.addUnderlayHost('kube', ip);
    const dir = join(topo.dir, 'kube');
    mkdirSync(dir, { recursive: true });
    const k = new KubeApiServer(topo, host.netns, ip, dir);
    await k.makeCerts();
    writeFileSync(join(dir, 'tokens.csv'), `${TOKEN},weft-admin,weft-admin,"system:masters"\n`);
    writeFileSync(k.kubeconfig, formatKubeconfig(k.url, readFileSync(join(dir, 'ca.crt')), TOKEN));
    k.startEtcd();
    await k.start();
    return k;
  }

  private async makeCerts(): Promise<void> {
    const d = this.dir;
    const run = (args: string[]): Promise<string> => nsRun(this.netns, ['openssl', ...args]);
    await run(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(d, 'ca.key'), '-out', join(d, 'ca.crt'), '-days', '2', '-subj', '/CN=weft-test-ca']);
    writeFileSync(join(d, 'san.ext'), `subjectAltName=IP:${this.ip},IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default.svc\n`);
    await run(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(d, 'apiserver.key'), '-out', join(d, 'apiserver.csr'), '-subj', '/CN=kube-apiserver']);
    await run(['x509', '-req', '-in', join(d, 'apiserver.csr'), '-CA', join(d, 'ca.crt'), '-CAkey', join(d, 'ca.key'), '-CAcreateserial', '-out', join(d, 'apiserver.crt'), '-days', '2', '-extfile', join(d, 'san.ext')]);
    await run(['genrsa', '-out', join(d, 'sa.key'), '2048']);
    await run(['rsa', '-in', join(d, 'sa.key'), '-pubout', '-out', join(d, 'sa.pub')]);
  }

  private startEtcd(): void {
    // Loopback of the API server's namespace only: nothing else needs to reach it.
    this.etcd = this.topo.spawnIn(this.netns, [join(KUBE_BIN_DIR, 'etcd'), '--name', 'kube', '--data-dir', join(this.dir, 'etcd'),
      '--listen-client-urls', 'http://127.0.0.1:2379', '--advertise-client-urls', 'http://127.0.0.1:2379',
      '--listen-peer-urls', 'http://127.0.0.1:2380', '--initial-advertise-peer-urls', 'http://127.0.0.1:2380',
      '--initial-cluster', 'kube=http://127.0.0.1:2380', '--log-level', 'error'], join(this.dir, 'etcd.log'));
  }

  /** Starts the API server (etcd keeps running); resolves once /readyz answers ok. */
  async start(): Promise<void> {
    const d = this.dir;
    this.api = this.topo.spawnIn(this.netns, [join(KUBE_BIN_DIR, 'kube-apiserver'),
      '--etcd-servers', 'http://127.0.0.1:2379', '--bind-address', this.ip, '--advertise-address', this.ip, '--secure-port', '6443',
      '--tls-cert-file', join(d, 'apiserver.crt'), '--tls-private-key-file', join(d, 'apiserver.key'), '--cert-dir', join(d, 'certs'),
      '--token-auth-file', join(d, 'tokens.csv'), '--authorization-mode', 'RBAC',
      '--service-account-issuer', 'https://kubernetes.default.svc', '--service-account-signing-key-file', join(d, 'sa.key'),
      '--service-account-key-file', join(d, 'sa.pub'), '--service-cluster-ip-range', '10.96.0.0/24', '--v', '1'], join(d, 'apiserver.log'));
    const end = Date.now() + 120_000;
    for (;;) {
      const r = await this.curl('GET', '/readyz');
      if (r.code === 0 && r.stdout.trim() === 'ok') return;
      if (this.api.exitCode !== null) throw new Error(`kube-apiserver exited with ${this.api.exitCode} (see ${d}/apiserver.log)`);
      if (Date.now() > end) throw new Error(`kube-apiserver not ready after 120 s: ${r.stdout} ${r.stderr}`);
      await new Promise((res) => setTimeout(res, 250));
    }
  }

  /** Stops the API server (SIGKILL: an outage); etcd and its data stay for start(). */
  async stop(): Promise<void> {
    const p = this.api;
    this.api = undefined;
    if (!p || p.exitCode !== null) return;
    const closed = new Promise((res) => p.once('close', res));
    p.kill('SIGKILL');
    await closed;
  }

  /** One API call with curl inside the server's namespace; resolves with curl's result (20 s: a loaded 2-core CI machine's apiserver can take over 5 s for a write). */
  curl(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<ExecResult> {
    const args = ['curl', '-sS', '--max-time', '20', '--cacert', join(this.dir, 'ca.crt'), '-H', `Authorization: Bearer ${TOKEN}`, '-X', method];
    if (body !== undefined) args.push('-H', `Content-Type: ${contentType}`, '--data-binary', '@-');
    return nsExec(this.netns, [...args, `${this.url}${path}`], body !== undefined ? { input: JSON.stringify(body) } : {});
  }

  /** An API call that must succeed; returns the decoded body. */
  async call(method: string, path: string, body?: unknown, contentType?: string): Promise<Record<string, unknown>> {
    const r = await this.curl(method, path, body, contentType);
    const out = JSON.parse(r.stdout || '{}') as Record<string, unknown>;
    if (r.code !== 0 || out.kind === 'Status' && out.status === 'Failure') throw new Error(`kube ${method} ${path}: ${r.stdout} ${r.stderr}`);
    return out;
  }

  /**
   * Creates a Node with the pod CIDR kube-controller-manager would assign and an annotation as the
   * kubelet leaves (flanneld v0.28.10 panics on a Node with no annotations at all: it writes into a nil map).
   */
  async createNode(name: string, podCidr: string): Promise<void> {
    await this.call('POST', '/api/v1/nodes', {
      apiVersion: 'v1', kind: 'Node', metadata: { name, annotations: { 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' } },
      spec: { podCIDR: podCidr, podCIDRs: [podCidr] },
    });
  }

  /** Deletes a Node. */
  async deleteNode(name: string): Promise<void> {
    await this.call('DELETE', `/api/v1/nodes/${name}`);
  }
}

/** A kubeconfig as kubeadm writes admin.conf (go-yaml layout, the CA inline), with a bearer token. */
function formatKubeconfig(server: string, ca: Buffer, token: string): string {
  return [
    'apiVersion: v1', 'clusters:', '- cluster:', `    certificate-authority-data: ${ca.toString('base64')}`, `    server: ${server}`, '  name: test',
    'contexts:', '- context:', '    cluster: test', '    user: admin', '  name: test', 'current-context: test', 'kind: Config', 'preferences: {}',
    'users:', '- name: admin', '  user:', `    token: ${token}`, '',
  ].join('\n');
}
