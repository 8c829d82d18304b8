// The netpol model on a simulated cluster (3 nodes, host-gw, a real kube-apiserver): the nine model
// pods are pod namespaces spread over the nodes (so that same-node and cross-node pairs both occur),
// exist as Pod objects with status.podIP/hostIP set by the test (no kubelet), and serve TCP 80, 81
// and UDP 80. Policy is enforced by weftd --network-policy or by kube-router, as chosen.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Cluster, type ClusterPod } from './cluster.ts';
import { setNodeAddresses, startKubeRouter } from './kube-router.ts';
import { ALL_PODS, modelPorts, NAMESPACES, PROBES, probeName, Reachability, mismatches, type PodId, type ProbeKind } from './netpol-model.ts';
import { nsExec } from './topology.ts';

export type Enforcer = 'weft' | 'kube-router';

const SERVER_PY = `
import socket, threading
def tcp(port):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('0.0.0.0', port)); s.listen(256)
    while True:
        c, _ = s.accept()
        try: c.sendall(b'ok'); c.close()
        except OSError: pass
def udp(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('0.0.0.0', port))
    while True:
        d, a = s.recvfrom(64); s.sendto(b'ok', a)
for p in (80, 81): threading.Thread(target=tcp, args=(p,), daemon=True).start()
udp(80)
`;

// argv: timeout, then ip:port:proto triples; prints one 0/1 per target, in order.
const PROBE_PY = `
import socket, sys, threading
t = float(sys.argv[1]); targets = sys.argv[2:]; out = [0] * len(targets)
def probe(i, spec):
    ip, port, proto = spec.split(':')
    try:
        if proto == 'TCP':
            s = socket.create_connection((ip, int(port)), timeout=t); s.settimeout(t); ok = s.recv(2) == b'ok'; s.close()
        else:
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(t); s.sendto(b'hi', (ip, int(port))); ok = s.recv(2) == b'ok'; s.close()
        out[i] = 1 if ok else 0
    except OSError:
        out[i] = 0
ths = [threading.Thread(target=probe, args=(i, x)) for i, x in enumerate(targets)]
[x.start() for x in ths]; [x.join() for x in ths]
print(''.join(map(str, out)))
`;

/** A running lab. */
export class NetpolLab {
  readonly pods = new Map<PodId, ClusterPod>();
  private policies: { namespace: string; name: string }[] = [];

  private constructor(readonly cluster: Cluster, readonly enforcer: Enforcer, private readonly dir: string) {}

  /** Builds the cluster, the namespaces and pods (API objects + servers), and starts the enforcer. */
  static async create(enforcer: Enforcer, onProgress?: (m: string) => void, backend: 'vxlan' | 'host-gw' | 'udp' = 'host-gw'): Promise<NetpolLab> {
    const cluster = await Cluster.create({
      backend, store: 'kube', nodes: 3, podsPerNode: 3, delegate: { ipMasq: false },
      ...(enforcer === 'weft' ? { weftdArgs: ['--network-policy', '--log-level', 'debug'] } : {}), ...(onProgress ? { onProgress } : {}),
    });
    const lab = new NetpolLab(cluster, enforcer, cluster.topo.dir);
    try {
      await lab.setup();
      return lab;
    } catch (e) {
      cluster.destroy();
      throw e;
    }
  }

  private get kube(): NonNullable<Cluster['kube']> {
    const k = this.cluster.kube;
    if (k === undefined) throw new Error('no kube-apiserver');
    return k;
  }

  private async setup(): Promise<void> {
    writeFileSync(join(this.dir, 'server.py'), SERVER_PY);
    writeFileSync(join(this.dir, 'probe.py'), PROBE_PY);
    for (const ns of NAMESPACES) {
      await this.kube.call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { ns } } });
      // No kube-controller-manager here: the ServiceAccount admission wants the default account to exist.
      await this.kube.call('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } });
    }
    // Pod i of the model on node (i mod 3): x/a, y/a and z/a share node 1, and so on.
    ALL_PODS.forEach((id, i) => {
      const node = this.cluster.nodes[i % 3];
      const pod = this.cluster.pods.filter((p) => p.node === node)[Math.floor(i / 3)];
      if (pod === undefined) throw new Error(`no pod namespace for ${id}`);
      this.pods.set(id, pod);
    });
    await setNodeAddresses(this.cluster);
    for (const [id, p] of this.pods) {
      const [ns, name] = id.split('/') as [string, string];
      await this.createPod(id, modelPorts());
      this.cluster.topo.spawnIn(p.netns, ['python3', join(this.dir, 'server.py')], join(this.dir, `server-${ns}-${name}.log`));
    }
    if (this.enforcer === 'kube-router') for (const n of this.cluster.nodes) await startKubeRouter(this.cluster, n);
  }

  /** Creates the Pod object of a model pod (declaring `ports`) and sets its status as a kubelet would. */
  private async createPod(id: PodId, ports: { name: string; containerPort: number; protocol: string }[]): Promise<void> {
    const [ns, name] = id.split('/') as [string, string];
    const p = this.pods.get(id);
    if (p === undefined) throw new Error(`no pod ${id}`);
    await this.kube.call('POST', `/api/v1/namespaces/${ns}/pods`, {
      apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns, labels: { pod: name } },
      spec: { nodeName: p.node.netns, automountServiceAccountToken: false, containers: [{ name: 'c', image: 'weft.invalid/none', ports }] },
    });
    await this.kube.call('PATCH', `/api/v1/namespaces/${ns}/pods/${name}/status`, {
      status: { phase: 'Running', podIP: p.ip, podIPs: [{ ip: p.ip }], hostIP: p.node.ip, hostIPs: [{ ip: p.node.ip }] },
    }, 'application/merge-patch+json');
  }

  /** Replaces a model pod's Pod object by one declaring `ports` (container ports are immutable); the server keeps running. */
  async redeclarePorts(id: PodId, ports: { name: string; containerPort: number; protocol: string }[] = modelPorts()): Promise<void> {
    const [ns, name] = id.split('/') as [string, string];
    await this.kube.call('DELETE', `/api/v1/namespaces/${ns}/pods/${name}?gracePeriodSeconds=0`);
    await this.createPod(id, ports);
  }

  /** Creates (or replaces) a NetworkPolicy object; namespace from its metadata. */
  async applyPolicy(pol: { metadata: { namespace: string; name: string }; spec: Record<string, unknown> }): Promise<void> {
    const { namespace, name } = pol.metadata;
    const base = `/apis/networking.k8s.io/v1/namespaces/${namespace}/networkpolicies`;
    const r = await this.kube.curl('GET', `${base}/${name}`);
    const exists = r.code === 0 && (JSON.parse(r.stdout || '{}') as { kind?: string }).kind === 'NetworkPolicy';
    const body = { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', ...pol };
    if (exists) await this.kube.call('PUT', `${base}/${name}`, body);
    else await this.kube.call('POST', base, body);
    if (!this.policies.some((p) => p.namespace === namespace && p.name === name)) this.policies.push({ namespace, name });
  }

  /** Deletes one policy. */
  async deletePolicy(namespace: string, name: string): Promise<void> {
    await this.kube.call('DELETE', `/apis/networking.k8s.io/v1/namespaces/${namespace}/networkpolicies/${name}`);
    this.policies = this.policies.filter((p) => !(p.namespace === namespace && p.name === name));
  }

  /** Deletes every policy this lab made. */
  async clearPolicies(): Promise<void> {
    for (const p of [...this.policies]) await this.deletePolicy(p.namespace, p.name);
  }

  /** Merge-patches a pod's labels. */
  async labelPod(id: PodId, labels: Record<string, string | null>): Promise<void> {
    const [ns, name] = id.split('/') as [string, string];
    await this.kube.call('PATCH', `/api/v1/namespaces/${ns}/pods/${name}`, { metadata: { labels } }, 'application/merge-patch+json');
  }

  /** One full probe round: every pod to every pod, for one probe kind. */
  async probe(kind: ProbeKind, timeoutS = 1): Promise<Reachability> {
    return (await this.probeAll([kind], timeoutS)).tables[0] ?? new Reachability(false);
  }

  /**
   * Every pod to every pod for all `kinds` at once: one probe process per source pod, every target
   * and kind in parallel threads, so a round costs one timeout however many kinds are probed.
   * `complete` is false when a probe process gave no answer (killed or failed on a loaded machine):
   * its row then says nothing about policy.
   */
  async probeAll(kinds: readonly ProbeKind[], timeoutS = 1): Promise<{ tables: Reachability[]; complete: boolean }> {
    const tables = kinds.map(() => new Reachability(false));
    let complete = true;
    await Promise.all(ALL_PODS.map(async (from) => {
      const src = this.pods.get(from);
      if (src === undefined) return;
      const targets = kinds.flatMap((kind) => ALL_PODS.map((to) => `${this.pods.get(to)?.ip ?? ''}:${kind.port}:${kind.protocol}`));
      const res = await nsExec(src.netns, ['python3', join(this.dir, 'probe.py'), String(timeoutS), ...targets], { timeoutMs: 60_000 });
      const bits = res.stdout.trim();
      if (res.code !== 0 || !new RegExp(`^[01]{${targets.length}}$`).test(bits)) complete = false;
      kinds.forEach((_, k) => ALL_PODS.forEach((to, i) => tables[k]?.expect(from, to, bits[k * ALL_PODS.length + i] === '1')));
    }));
    return { tables, complete };
  }

  /**
   * Probes every kind until the tables match `expected` (policy takes effect asynchronously), giving up
   * once `timeoutMs` has passed and at least three complete rounds were probed (a loaded machine may
   * take longer than the timeout for one round); returns the mismatches of the last round (empty: all match).
   */
  async validate(expected: (k: ProbeKind) => Reachability, timeoutMs = 45_000): Promise<string[]> {
    const end = Date.now() + timeoutMs;
    let rounds = 0;
    for (;;) {
      const bad: string[] = [];
      const seen = await this.probeAll(PROBES);
      PROBES.forEach((k, i) => { for (const m of mismatches(expected(k), seen.tables[i] ?? new Reachability(false))) bad.push(`${probeName(k)} ${m}`); });
      if (bad.length === 0) return bad;
      if (seen.complete) rounds++;
      if (Date.now() > end && rounds >= 3) return bad;
      if (Date.now() > end + 120_000) return [...bad, `(only ${rounds} complete probe rounds)`];
      await new Promise((res) => setTimeout(res, 200));
    }
  }

  /** Removes everything. */
  destroy(): void {
    this.cluster.destroy();
  }
}
