// The Service suite, run unchanged against weftd --service-proxy and the real kube-proxy (nftables and
// iptables mode): a kube-apiserver, two nodes with pods, Services and EndpointSlices made through the
// API, traffic only between the test's namespaces. A case kube-proxy fails is a wrong case.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Cluster, waitFor, type ClusterNode, type ClusterPod } from '../../../testkit/cluster.ts';
import { kubeBinariesPresent } from '../../../testkit/kube-apiserver.ts';
import { kubeProxyPresent, KUBE_PROXY_BIN } from '../../../testkit/kube-proxy.ts';
import { createService, createSlice, setNodeAddresses, updateSlice, type TestEndpoint } from '../../../testkit/kube-services.ts';
import { SvcPeers } from '../../../testkit/svc-peers.ts';
import { nsRun } from '../../../testkit/topology.ts';
import { isRoot } from '../../../testkit/netns.ts';

/** A Service proxy under test. */
export interface ProxyUnderTest {
  name: string;
  /** Extra weftd flags for the cluster. */
  weftdArgs: string[];
  /** Starts the proxy on every node (after the cluster is up). */
  start(c: Cluster): Promise<void>;
  /** Restarts the proxy on one node (a new process, the kernel state left as it was). */
  restart(c: Cluster, n: ClusterNode): Promise<void>;
}

const DIST = join(import.meta.dirname, '..', '..', '..', 'dist', 'bin', 'weftd');
const NETWORK = '10.244.0.0/16';
const TCP = 8080;
const TCP_ALT = 8081;
const UDP = 5353;

/** Why the suite cannot run here ('' when it can); outside CI a missing kube-proxy skips loudly, in CI it fails. */
export function suiteSkip(): string | false {
  if (!isRoot()) return 'needs root';
  if (!existsSync(DIST)) return 'dist/bin/weftd missing: npm run build';
  const missing = !kubeBinariesPresent() ? 'kube-apiserver/etcd' : !kubeProxyPresent() ? KUBE_PROXY_BIN : '';
  if (missing === '') return false;
  const msg = `${missing} is missing: run scripts/kube-setup.sh (the Service suite runs against the real kube-proxy too)`;
  if (process.env.CI === 'true') throw new Error(msg);
  process.stderr.write(`\n*** SKIPPING the Service suite: ${msg} ***\n\n`);
  return msg;
}

/** Runs every case against `p`. */
export function serviceSuite(p: ProxyUnderTest): void {
  void describe(`Services through ${p.name}`, { skip: suiteSkip(), timeout: 600_000 }, () => {
    let c: Cluster;
    let peers: SvcPeers;
    let client: ClusterPod;
    const pod = (name: string): ClusterPod => {
      const x = c.pods.find((q) => q.name === name);
      if (x === undefined) throw new Error(`no pod ${name}`);
      return x;
    };
    const ep = (name: string, extra: Partial<TestEndpoint> = {}): TestEndpoint => ({ ip: pod(name).ip, nodeName: pod(name).node.netns, ...extra });
    const n = (i: number): ClusterNode => c.nodes[i - 1] as ClusterNode;
    const web = { ports: [{ name: 'http', port: TCP }, { name: 'alt', port: TCP_ALT }] };

    before(async () => {
      c = await Cluster.create({ backend: 'vxlan', store: 'kube', nodes: 2, podsPerNode: 3, network: NETWORK, weftdArgs: p.weftdArgs });
      // A default route into a namespace that does not forward: an unprogrammed address times out rather than failing ENETUNREACH.
      const sink = await c.topo.addUnderlayHost('sink', '192.0.2.250');
      await nsRun(sink.netns, ['sysctl', '-qw', 'net.ipv4.ip_forward=0']);
      for (const node of c.nodes) await nsRun(node.netns, ['ip', 'route', 'replace', 'default', 'via', '192.0.2.250']);
      await setNodeAddresses(c.kube!, c.nodes);
      peers = new SvcPeers(c.topo);
      // The conflist has no loopback plugin: a pod reaching itself (hairpin, its own address) needs lo up.
      for (const q of c.pods) await nsRun(q.netns, ['ip', 'link', 'set', 'lo', 'up']);
      for (const q of c.pods) if (q.name !== 'n1p1') await peers.startServer(q.netns, q.name, [TCP, TCP_ALT], UDP, q.ip);
      client = pod('n1p1');
      await p.start(c);
    });
    after(() => c?.destroy());

    const until = (what: string, pred: () => Promise<boolean>) => waitFor(what, pred, 20_000, 100);

    it('ClusterIP TCP: spreads over endpoints on both nodes; named target ports; a second port', async () => {
      const s = await createService(c.kube!, 'web', { ports: [{ name: 'http', port: 80, targetPort: 'http' }, { name: 'alt', port: 81, targetPort: 'alt' }] });
      await createSlice(c.kube!, 'web-1', 'web', [ep('n1p2'), ep('n2p1')], web.ports);
      await until('web answers', async () => (await peers.probe(client.netns, 'tcp', s.clusterIP, 80)).ok);
      const seen = new Set(await peers.names(client.netns, 'tcp', s.clusterIP, 80, 20));
      assert.deepEqual([...seen].sort(), ['n1p2', 'n2p1']);
      const alt = await peers.probe(client.netns, 'tcp', s.clusterIP, 81);
      assert.ok(alt.ok, JSON.stringify(alt));
      // From a pod inside the cluster the source is kept.
      assert.match(alt.reply ?? '', new RegExp(`${client.ip.replace(/\./g, '\\.')}$`));
    });

    it('ClusterIP UDP', async () => {
      const s = await createService(c.kube!, 'dns', { ports: [{ name: 'dns', port: 53, protocol: 'UDP', targetPort: UDP }] });
      await createSlice(c.kube!, 'dns-1', 'dns', [ep('n2p2')], [{ name: 'dns', port: UDP, protocol: 'UDP' }]);
      await until('dns answers', async () => (await peers.probe(client.netns, 'udp', s.clusterIP, 53, 500)).ok);
      assert.match((await peers.probe(client.netns, 'udp', s.clusterIP, 53)).reply ?? '', /^n2p2 /);
    });

    it('UDP: a client keeping its source port leaves a removed endpoint (its stale conntrack entry is deleted)', async () => {
      const s = await createService(c.kube!, 'dns2', { ports: [{ name: 'dns', port: 54, protocol: 'UDP', targetPort: UDP }] });
      await createSlice(c.kube!, 'dns2-1', 'dns2', [ep('n2p2'), ep('n1p3')], [{ name: 'dns', port: UDP, protocol: 'UDP' }]);
      const SRC = 40_054;
      const from = async () => (await peers.probe(client.netns, 'udp', s.clusterIP, 54, 500, SRC)).reply?.split(' ')[0];
      await until('dns2 answers', async () => (await from()) !== undefined);
      const first = await from();
      // Every datagram keeps the entry alive: only its deletion moves the client.
      assert.equal(await from(), first);
      const other = first === 'n2p2' ? 'n1p3' : 'n2p2';
      await updateSlice(c.kube!, 'dns2-1', [ep(other)], [{ name: 'dns', port: UDP, protocol: 'UDP' }]);
      await until(`the client reaches ${other}`, async () => (await from()) === other);
    });

    it('endpoint removal and addition take effect', async () => {
      const ip = (await c.kube!.call('GET', '/api/v1/namespaces/default/services/web')).spec as { clusterIP: string };
      await updateSlice(c.kube!, 'web-1', [ep('n2p1')], web.ports);
      await until('only n2p1', async () => (await peers.names(client.netns, 'tcp', ip.clusterIP, 80, 6)).every((x) => x === 'n2p1'));
      await updateSlice(c.kube!, 'web-1', [ep('n2p1'), ep('n2p2')], web.ports);
      await until('n2p2 back', async () => (await peers.names(client.netns, 'tcp', ip.clusterIP, 80, 6)).includes('n2p2'));
      // Not ready and not serving: out.
      await updateSlice(c.kube!, 'web-1', [ep('n2p1'), ep('n2p2', { ready: false, serving: false })], web.ports);
      await until('n2p2 not ready', async () => (await peers.names(client.netns, 'tcp', ip.clusterIP, 80, 6)).every((x) => x === 'n2p1'));
    });

    it('no endpoints: refused at once (ECONNREFUSED), not a timeout', async () => {
      const s = await createService(c.kube!, 'empty', { ports: [{ name: 'http', port: 80, targetPort: TCP }] });
      await until('refused', async () => (await peers.probe(client.netns, 'tcp', s.clusterIP, 80, 1500)).code === 'ECONNREFUSED');
      const r = await peers.probe(client.netns, 'tcp', s.clusterIP, 80, 1500);
      assert.equal(r.code, 'ECONNREFUSED');
    });

    it('NodePort from another node, to an endpoint on either node', async () => {
      const s = await createService(c.kube!, 'np', { type: 'NodePort', ports: [{ name: 'http', port: 80, targetPort: TCP }] });
      await createSlice(c.kube!, 'np-1', 'np', [ep('n1p2')], [{ name: 'http', port: TCP }]);
      const np = s.nodePorts.http ?? 0;
      await until('n1 NodePort from n2', async () => (await peers.probe(n(2).netns, 'tcp', n(1).ip, np)).ok);
      await until('n2 NodePort from n1 (endpoint on n1)', async () => (await peers.probe(n(1).netns, 'tcp', n(2).ip, np)).ok);
      assert.match((await peers.probe(n(2).netns, 'tcp', n(1).ip, np)).reply ?? '', /^n1p2 /);
    });

    it('sessionAffinity ClientIP: one client sticks to one endpoint', async () => {
      const s = await createService(c.kube!, 'sticky', { sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } }, ports: [{ name: 'http', port: 80, targetPort: TCP }] });
      await createSlice(c.kube!, 'sticky-1', 'sticky', [ep('n1p2'), ep('n2p1'), ep('n2p2')], [{ name: 'http', port: TCP }]);
      await until('sticky answers', async () => (await peers.probe(client.netns, 'tcp', s.clusterIP, 80)).ok);
      const seen = new Set(await peers.names(client.netns, 'tcp', s.clusterIP, 80, 12));
      assert.equal(seen.size, 1, [...seen].join(','));
    });

    it('externalTrafficPolicy Local: source kept via a node with an endpoint, dropped via one without; healthCheckNodePort', async () => {
      const s = await createService(c.kube!, 'local', { type: 'LoadBalancer', externalTrafficPolicy: 'Local', ports: [{ name: 'http', port: 80, targetPort: TCP }] });
      await createSlice(c.kube!, 'local-1', 'local', [ep('n2p1')], [{ name: 'http', port: TCP }]);
      const np = s.nodePorts.http ?? 0;
      await until('via n2', async () => (await peers.probe(n(1).netns, 'tcp', n(2).ip, np)).ok);
      assert.equal((await peers.probe(n(1).netns, 'tcp', n(2).ip, np)).reply, `n2p1 ${n(1).ip}`);
      const via1 = await peers.probe(n(2).netns, 'tcp', n(1).ip, np, 1500);
      assert.equal(via1.code, 'TIMEOUT', JSON.stringify(via1));
      const hc = s.healthCheckNodePort ?? 0;
      assert.ok(hc > 0);
      const curl = async (from: ClusterNode, to: ClusterNode) => (await nsRun(from.netns, ['curl', '-sS', '-o', '/dev/null', '-w', '%{http_code}', '--max-time', '2', `http://${to.ip}:${hc}/`])).trim();
      await until('health check on n2', async () => (await curl(n(1), n(2)).catch(() => '')) === '200');
      assert.equal(await curl(n(2), n(1)), '503');
    });

    it('hairpin: a pod reaches itself through its Service', async () => {
      const s = await createService(c.kube!, 'self', { ports: [{ name: 'http', port: 80, targetPort: TCP }] });
      await createSlice(c.kube!, 'self-1', 'self', [ep('n1p2')], [{ name: 'http', port: TCP }]);
      const me = pod('n1p2');
      await until('self answers', async () => (await peers.probe(me.netns, 'tcp', s.clusterIP, 80)).ok);
      const r = await peers.probe(me.netns, 'tcp', s.clusterIP, 80);
      // Masqueraded (the reply must come back through the bridge, not straight from the pod to itself).
      assert.match(r.reply ?? '', /^n1p2 /);
      assert.notEqual(r.reply, `n1p2 ${me.ip}`);
    });

    it('restarting the proxy keeps a running TCP flow', async () => {
      const ip = ((await c.kube!.call('GET', '/api/v1/namespaces/default/services/web')).spec as { clusterIP: string }).clusterIP;
      const flow = peers.startFlow(client.netns, ip, 80);
      try {
        await until('flow running', async () => flow.oks() >= 3);
        await p.restart(c, n(1));
        const base = flow.oks();
        await until('flow still answers after the restart', async () => flow.oks() >= base + 5 || flow.broken());
        assert.equal(flow.broken(), false, flow.output().slice(-400));
      } finally {
        flow.stop();
      }
    });

    it('API server outage: the data plane stays; changes resume after it', async () => {
      const ip = ((await c.kube!.call('GET', '/api/v1/namespaces/default/services/web')).spec as { clusterIP: string }).clusterIP;
      await c.kube!.stop();
      try {
        await new Promise((r) => setTimeout(r, 2000));
        assert.deepEqual(await peers.names(client.netns, 'tcp', ip, 80, 4), ['n2p1', 'n2p1', 'n2p1', 'n2p1']);
      } finally {
        await c.kube!.start();
      }
      await updateSlice(c.kube!, 'web-1', [ep('n1p3')], web.ports);
      await until('change after the outage', async () => (await peers.names(client.netns, 'tcp', ip, 80, 4)).every((x) => x === 'n1p3'));
    });
  });
}
