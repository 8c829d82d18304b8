// The kube store against an in-process fake API server (plain HTTP on loopback): acquire (the node
// found through its pod, the annotations patched only when they differ, the IPv6 side) and the
// peers read through the shared watch cache's Node informer.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeLeaseStore, type KubeStoreOptions } from '../../../../../agent/lease/kube/store.ts';
import { parseNetConf } from '../../../../../agent/config/net-conf.ts';
import { openKubeApi } from '../../../../../agent/kube/api.ts';
import { createAgentLog } from '../../../../../agent/log.ts';
import { leaseAnnotations } from '../../../../../agent/lease/kube/node-lease.ts';

const P = 'flannel.alpha.coreos.com';
interface Call { method: string; path: string; body: unknown }
/** A list of the nodes (the watch cache pages with ?limit=), not a watch. */
const isNodeList = (path: string): boolean => /^\/api\/v1\/nodes(\?limit=\d+)?$/.test(path);

/** A fake API server: one pod, one node; records every call; PATCH merges annotations. */
function fakeApi(node: Record<string, unknown>): { server: Server; calls: Call[] } {
  const calls: Call[] = [];
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => { text += c.toString(); });
    req.on('end', () => {
      const body = text ? JSON.parse(text) as Record<string, unknown> : undefined;
      calls.push({ method: req.method ?? '', path: req.url ?? '', body });
      const send = (code: number, obj: unknown): void => { res.writeHead(code, { 'Content-Type': 'application/json' }).end(JSON.stringify(obj)); };
      // The list, then a watch that never says anything (a dead connection seen from this side).
      if (isNodeList(req.url ?? '')) return send(200, { metadata: { resourceVersion: '7' }, items: [] });
      if (req.url?.startsWith('/api/v1/nodes?watch=true')) return void res.writeHead(200, { 'Content-Type': 'application/json' }).flushHeaders();
      if (req.url === '/api/v1/namespaces/kube-flannel/pods/weft-abc') return send(200, { spec: { nodeName: 'worker-1' } });
      if (req.url === '/api/v1/nodes/worker-1' && req.method === 'GET') return send(200, node);
      if (req.url === '/api/v1/nodes/worker-1/status' && req.method === 'PATCH') {
        const meta = node['metadata'] as { annotations: Record<string, string> };
        Object.assign(meta.annotations, (body?.['metadata'] as { annotations?: Record<string, string> } | undefined)?.annotations);
        return send(200, node);
      }
      send(404, { kind: 'Status', message: 'not found' });
    });
  });
  return { server, calls };
}

const vxlan = { publicIp: '192.0.2.11', backendType: 'vxlan', backendData: { VNI: 1, VtepMAC: 'aa:bb:cc:dd:ee:ff' } };

void describe('kube store acquire', () => {
  const node = { metadata: { name: 'worker-1', annotations: {} as Record<string, string> }, spec: { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24', 'fd00:10:244:1::/64'] } };
  const api = fakeApi(node);
  let opts: KubeStoreOptions;
  before(async () => {
    await new Promise<void>((r) => api.server.listen(0, '127.0.0.1', r));
    const port = (api.server.address() as AddressInfo).port;
    opts = { conn: { server: `http://127.0.0.1:${port}` }, podName: 'weft-abc', podNamespace: 'kube-flannel', annotationPrefix: P, netConf: parseNetConf('{"Network":"10.244.0.0/16","Backend":{"Type":"vxlan"}}') };
  });
  after(() => api.server.close());

  void it('finds its node through POD_NAMESPACE/POD_NAME, publishes the v6 annotations and returns both sides', async () => {
    const store = new KubeLeaseStore(opts);
    try {
      const lease = await store.acquire({ ...vxlan, publicIpv6: '2001:db8::11', backendV6Data: { VNI: 1, VtepMAC: 'aa:bb:cc:dd:ee:01' } });
      assert.deepEqual(lease, {
        subnet: '10.244.1.0/24', publicIp: '192.0.2.11', backendType: 'vxlan', backendData: vxlan.backendData, expiration: 0,
        ipv6Subnet: 'fd00:10:244:1::/64', publicIpv6: '2001:db8::11', backendV6Data: { VNI: 1, VtepMAC: 'aa:bb:cc:dd:ee:01' },
      });
      assert.equal(api.calls[0]?.path, '/api/v1/namespaces/kube-flannel/pods/weft-abc');
      assert.equal(node.metadata.annotations[`${P}/public-ipv6`], '2001:db8::11');
      assert.equal(node.metadata.annotations[`${P}/backend-v6-data`], '{"VNI":1,"VtepMAC":"aa:bb:cc:dd:ee:01"}');
      assert.equal(node.metadata.annotations[`${P}/public-ip`], '192.0.2.11');
    } finally {
      await store.close();
    }
  });

  void it('patches no annotations when they already match (only the NetworkUnavailable condition)', async () => {
    api.calls.length = 0;
    const store = new KubeLeaseStore({ ...opts, nodeName: 'worker-1' });
    try {
      await store.acquire({ ...vxlan, publicIpv6: '2001:db8::11', backendV6Data: { VNI: 1, VtepMAC: 'aa:bb:cc:dd:ee:01' } });
      const patches = api.calls.filter((c) => c.method === 'PATCH');
      assert.equal(patches.length, 1);
      assert.ok((patches[0]?.body as { status?: unknown }).status, 'the one PATCH is the condition');
      assert.equal(api.calls.some((c) => c.path.includes('/pods/')), false, 'NODE_NAME given: no pod lookup');
    } finally {
      await store.close();
    }
  });

  void it('refuses IPv6 attributes on a node without an IPv6 podCIDR', async () => {
    node.spec.podCIDRs = ['10.244.1.0/24'];
    const store = new KubeLeaseStore({ ...opts, nodeName: 'worker-1' });
    try {
      await assert.rejects(store.acquire({ ...vxlan, publicIpv6: '2001:db8::11', backendV6Data: {} }), /no IPv6 pod cidr/);
      const v4 = await store.acquire(vxlan);
      assert.equal(v4.ipv6Subnet, undefined);
    } finally {
      await store.close();
    }
  });

  void it('IPv6-only (EnableIPv4 false): the IPv6 podCIDR alone, flanneld\'s IPv6-only annotations, needs the IPv6 address', async () => {
    node.spec.podCIDRs = ['fd00:10:244:1::/64'];
    node.spec.podCIDR = 'fd00:10:244:1::/64';
    const v6only = parseNetConf('{"EnableIPv4":false,"EnableIPv6":true,"IPv6Network":"fd00:10:244::/56","Backend":{"Type":"vxlan"}}');
    const store = new KubeLeaseStore({ ...opts, netConf: v6only, nodeName: 'worker-1' });
    try {
      await assert.rejects(store.acquire(vxlan), /IPv6-only\) needs the node's IPv6 address/);
      const lease = await store.acquire({ ...vxlan, publicIpv6: '2001:db8::11', backendV6Data: { VNI: 1, VtepMAC: 'aa:bb:cc:dd:ee:01' } });
      assert.deepEqual([lease.subnet, lease.publicIp, lease.ipv6Subnet, lease.publicIpv6], ['0.0.0.0/0', '0.0.0.0', 'fd00:10:244:1::/64', '2001:db8::11']);
      assert.equal(node.metadata.annotations[`${P}/public-ipv6`], '2001:db8::11');
    } finally {
      node.spec.podCIDRs = ['10.244.1.0/24'];
      node.spec.podCIDR = '10.244.1.0/24';
      await store.close();
    }
  });

  void it('publishes public-ip-overwrite as public-ip (k3s --flannel-external-ip), keeps its own address in the lease, refuses a non-address', async () => {
    node.metadata.annotations[`${P}/public-ip-overwrite`] = '203.0.113.9';
    const store = new KubeLeaseStore({ ...opts, nodeName: 'worker-1' });
    try {
      const lease = await store.acquire(vxlan);
      assert.equal(lease.publicIp, '192.0.2.11');
      assert.equal(node.metadata.annotations[`${P}/public-ip`], '203.0.113.9');
      assert.equal(node.metadata.annotations[`${P}/backend-data`], JSON.stringify(vxlan.backendData));
      api.calls.length = 0;
      node.metadata.annotations[`${P}/public-ip-overwrite`] = 'foo';
      await assert.rejects(store.acquire(vxlan), /public-ip-overwrite="foo" is not an IPv4 address/);
      assert.equal(api.calls.some((c) => c.method === 'PATCH'), false, 'nothing written');
      assert.equal(node.metadata.annotations[`${P}/public-ip`], '203.0.113.9');
    } finally {
      delete node.metadata.annotations[`${P}/public-ip-overwrite`];
      await store.close();
    }
  });
});

void describe('kube store watch', () => {
  const api = fakeApi({ metadata: { name: 'worker-1', annotations: {} }, spec: {} });
  let url = '';
  before(async () => {
    await new Promise<void>((r) => api.server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;
  });
  after(() => { api.server.closeAllConnections(); api.server.close(); });

  void it('re-lists when the watch stays silent past watchIdleMs (no bookmark: a dead connection)', async () => {
    const errors: string[] = [];
    const store = new KubeLeaseStore({
      conn: { server: url }, nodeName: 'worker-1', annotationPrefix: P, watchIdleMs: 200, maxBackoffMs: 50,
      netConf: parseNetConf('{"Network":"10.244.0.0/16","Backend":{"Type":"vxlan"}}'), onError: (e) => errors.push(e.message),
    });
    try {
      await store.list();
      await new Promise((r) => setTimeout(r, 900));
      const lists = api.calls.filter((c) => isNodeList(c.path)).length;
      assert.ok(lists >= 2, `re-listed after the silent watch (${lists} lists)`);
      assert.match(errors[0] ?? '', /nothing received for 200 ms/);
    } finally {
      await store.close();
    }
  });
});

void describe('kube store on a shared watch cache', { timeout: 10_000 }, () => {
  const annotated = (name: string, cidr: string, ip: string): Record<string, unknown> => ({
    metadata: { name, resourceVersion: '5', annotations: leaseAnnotations(P, { publicIp: ip, backendType: 'vxlan', backendData: { VNI: 1 } }) },
    spec: { podCIDR: cidr },
  });
  let lists = 0;
  let watch: ServerResponse | undefined;
  const server = createServer((req, res) => {
    if (req.url?.startsWith('/api/v1/nodes?limit=')) {
      lists++;
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ metadata: { resourceVersion: '5' }, items: [annotated('a', '10.244.1.0/24', '192.0.2.1'), annotated('b', '10.244.2.0/24', '192.0.2.2')] }));
    } else if (req.url?.startsWith('/api/v1/nodes?watch=true')) {
      watch = res;
      res.writeHead(200, { 'Content-Type': 'application/json' }).flushHeaders();
    } else {
      res.writeHead(404).end('{}');
    }
  });
  before(() => new Promise<void>((r) => server.listen(0, '127.0.0.1', r)));
  after(() => { server.closeAllConnections(); server.close(); });

  void it('reads Nodes through the one informer another controller shares, and withdraws a deleted or re-addressed Node', async () => {
    const kube = openKubeApi({ server: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }, { log: createAgentLog('error', () => undefined) });
    const store = new KubeLeaseStore({ api: kube, nodeName: 'a', annotationPrefix: P, netConf: parseNetConf('{"Network":"10.244.0.0/16","Backend":{"Type":"vxlan"}}') });
    try {
      const other = kube.cache.informer({ path: '/api/v1/nodes' });
      const { leases, revision } = await store.list();
      assert.deepEqual(leases.map((l) => l.subnet).sort(), ['10.244.1.0/24', '10.244.2.0/24']);
      assert.equal(other.list().length, 2);
      assert.equal(lists, 1, 'one list for both readers');
      const events: string[] = [];
      store.watch(revision, (ev) => events.push(`${ev.type} ${ev.lease.subnet}`));
      while (watch === undefined) await new Promise((r) => setTimeout(r, 10));
      watch.write(`${JSON.stringify({ type: 'DELETED', object: annotated('b', '10.244.2.0/24', '192.0.2.2') })}\n`);
      watch.write(`${JSON.stringify({ type: 'MODIFIED', object: { ...annotated('a', '10.244.3.0/24', '192.0.2.1'), metadata: { ...annotated('a', '', '192.0.2.1')['metadata'] as object, resourceVersion: '6' } } })}\n`);
      while (events.length < 3) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(events, ['removed 10.244.2.0/24', 'removed 10.244.1.0/24', 'added 10.244.3.0/24']);
    } finally {
      await store.close();
      kube.close();
    }
  });
});
