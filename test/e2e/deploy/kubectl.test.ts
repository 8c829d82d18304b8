// Issue 18: Debian's kubectl (kubernetes-client, unpacked by scripts/kubectl-setup.sh) applies
// deploy/weft.yaml to a real kube-apiserver v1.34 (testkit/kube-apiserver.ts): every object is
// created without an error or a warning, the server keeps every field the manifest sets (nothing
// pruned or defaulted over), a second apply changes nothing, and the ClusterRole gives the
// service account what weftd --kube-subnet-mgr calls and nothing more on nodes and pods.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kubeBinariesPresent, KubeApiServer } from '../../../testkit/kube-apiserver.ts';
import { Topology } from '../../../testkit/topology.ts';
import { kubectl, kubectlSkipReason, manifestObjects, MANIFEST, type KubeObject } from './helpers.ts';

const skip = kubectlSkipReason() || (kubeBinariesPresent() ? false : 'kube-apiserver not built: run scripts/kube-setup.sh');

/** Where `want` (a manifest object) is not found in `got` (the server's): "path: want vs got" per leaf. */
function notKept(want: unknown, got: unknown, path = ''): string[] {
  if (Array.isArray(want)) {
    if (!Array.isArray(got) || got.length !== want.length) return [`${path}: ${JSON.stringify(want)} vs ${JSON.stringify(got)}`];
    return want.flatMap((w, i) => notKept(w, got[i], `${path}[${i}]`));
  }
  if (want !== null && typeof want === 'object') {
    if (got === null || typeof got !== 'object') return [`${path}: object vs ${JSON.stringify(got)}`];
    return Object.entries(want).flatMap(([k, w]) => notKept(w, (got as Record<string, unknown>)[k], `${path}.${k}`));
  }
  return want === got ? [] : [`${path}: ${JSON.stringify(want)} vs ${JSON.stringify(got)}`];
}

/** "daemonset.apps/weft" for an object, as kubectl names it (core kinds have no group). */
function kubectlName(o: KubeObject): string {
  const group = o.apiVersion.includes('/') ? `.${o.apiVersion.split('/')[0] ?? ''}` : '';
  return `${o.kind.toLowerCase()}${group}/${o.metadata.name}`;
}

void describe('kubectl apply -f deploy/weft.yaml against kube-apiserver v1.34', { skip }, () => {
  let topo: Topology;
  let kube: KubeApiServer;
  const objects = manifestObjects();
  before(async () => {
    topo = await Topology.create({ nodes: 0 });
    kube = await KubeApiServer.create(topo);
  }, { timeout: 240_000 });
  after(() => topo?.destroySync());

  void it('creates every object without an error or a warning', async () => {
    assert.ok(objects.length >= 6, `only ${objects.length} objects in ${MANIFEST}`);
    const r = await kubectl(kube, ['apply', '-f', MANIFEST]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '', 'kubectl printed warnings');
    assert.deepEqual(r.stdout.trim().split('\n'), objects.map((o) => `${kubectlName(o)} created`));
  });

  void it('kubectl get shows each object with every field the manifest sets', async () => {
    const r = await kubectl(kube, ['get', '-f', MANIFEST, '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const items = (JSON.parse(r.stdout) as { items: KubeObject[] }).items;
    assert.equal(items.length, objects.length);
    for (const [i, want] of objects.entries()) {
      const got = items[i];
      assert.ok(got, `no item ${i}`);
      assert.equal(`${got.kind}/${got.metadata.name}`, `${want.kind}/${want.metadata.name}`);
      assert.deepEqual(notKept(want, got), [], `${kubectlName(want)}: the server changed what the manifest sets`);
    }
    const table = await kubectl(kube, ['get', '-f', MANIFEST]);
    assert.equal(table.code, 0, table.stderr);
    for (const o of objects) assert.match(table.stdout, new RegExp(`^${kubectlName(o).replace(/\./g, '\\.')} `, 'm'));
  });

  void it('a second apply changes nothing', async () => {
    const r = await kubectl(kube, ['apply', '-f', MANIFEST]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.deepEqual(r.stdout.trim().split('\n'), objects.map((o) => `${kubectlName(o)} unchanged`));
  });

  void it('gives the service account what weftd calls and nothing more on nodes or pods', async () => {
    const sa = 'system:serviceaccount:kube-weft:weft';
    const can = async (verb: string, resource: string, sub?: string): Promise<string> => {
      const r = await kubectl(kube, ['auth', 'can-i', verb, resource, '--as', sa, ...(sub ? ['--subresource', sub] : [])]);
      return r.stdout.trim();
    };
    for (const verb of ['get', 'list', 'watch']) assert.equal(await can(verb, 'nodes'), 'yes', `${verb} nodes`);
    assert.equal(await can('patch', 'nodes', 'status'), 'yes', 'patch nodes/status');
    for (const verb of ['delete', 'update', 'patch']) assert.equal(await can(verb, 'nodes'), 'no', `${verb} nodes`);
    // flanneld reads its own pod when NODE_NAME is unset; weftd requires NODE_NAME (docs/weftd-kube.md).
    assert.equal(await can('get', 'pods'), 'no', 'get pods');
  });
});
