// Issue 27 item 3: every bad value of test/unit/agent/flag-cases.ts, plus bad net-conf keys, run
// through the built weftd (dist/bin) in a node namespace against a real store (a lease directory, a
// real etcd, a real kube-apiserver): each exits with its code (2 for a flag, 1 when found at start)
// and names the problem, and nothing changed: the store (lease files, etcd keys, the Node's
// annotations and conditions), subnet.env and the VTEP records beside it, the node's links and
// addresses. The working command line of each store then does write a lease, so the checks can see one.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EtcdServer } from '../../../testkit/etcd.ts';
import { KubeApiServer, kubeBinariesPresent } from '../../../testkit/kube-apiserver.ts';
import { rootOnly } from '../../../testkit/netns.ts';
import { Topology, nsExec, type SimNode } from '../../../testkit/topology.ts';
import { treeFingerprint } from '../../e2e/validate-first/fingerprint.ts';
import { FLAG_CASES, baseWithout, type FlagCase, type StoreKind } from '../../unit/agent/flag-cases.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const WEFTD = join(ROOT, 'dist', 'bin', 'weftd');
const NET_CONF = { Network: '10.244.0.0/16', Backend: { Type: 'vxlan' } };

/** net-conf.json keys with a bad value: refused at start, before the store is written. */
const NET_CONF_CASES: Array<{ conf: Record<string, unknown>; error: RegExp }> = [
  { conf: { Network: '10.244.0.0/33', Backend: { Type: 'vxlan' } }, error: /net-conf: Network: is not an IPv4 CIDR/ },
  { conf: { Network: '10.244.0.0/16', SubnetLen: 31, Backend: { Type: 'vxlan' } }, error: /net-conf: SubnetLen: must be at most 30/ },
  { conf: { Network: '10.244.0.0/16', EnableIPv4: 'yes', Backend: { Type: 'vxlan' } }, error: /net-conf: EnableIPv4: must be true or false/ },
  { conf: { Network: '10.244.0.0/16', EnableIPv6: true, Backend: { Type: 'vxlan' } }, error: /net-conf: IPv6Network: is required with EnableIPv6/ },
  { conf: { Network: '10.244.0.0/16', Backend: { Type: 'wireguard' } }, error: /net-conf: Backend.Type: must be one of/ },
  { conf: { Network: '10.244.0.0/16', Backend: { Type: 'vxlan', VNI: -1 } }, error: /net-conf: Backend.VNI: must be an integer/ },
];

function skip(): string | false {
  if (rootOnly().skip !== undefined) return 'needs root';
  if (!existsSync(WEFTD)) return 'dist/bin/weftd missing: run npm run build';
  return kubeBinariesPresent() ? false : 'kube-apiserver not built: run scripts/kube-setup.sh';
}

void describe('weftd refuses bad flags and net-conf keys before writing anything', { skip: skip(), timeout: 240_000, concurrency: 3 }, () => {
  let topo: Topology;
  let etcd: EtcdServer;
  let kube: KubeApiServer;
  const node: Partial<Record<StoreKind, SimNode | undefined>> = {};
  before(async () => {
    topo = await Topology.create({ nodes: 3 });
    [etcd, kube] = await Promise.all([EtcdServer.create(topo), KubeApiServer.create(topo)]);
    [node.file, node.etcd, node.kube] = topo.nodes;
    await kube.createNode((node.kube as SimNode).netns, '10.244.1.0/24');
    for (const n of topo.nodes) {
      writeFileSync(join(n.dir, 'net-conf.json'), JSON.stringify(NET_CONF));
      writeFileSync(join(n.dir, 'file'), 'a regular file\n');
      mkdirSync(join(n.dir, 'run'), { recursive: true });
    }
  });
  after(() => topo?.destroySync());

  /** The store kind's working command line (environment first, for `env`). */
  function base(s: StoreKind, n: SimNode): { env: Record<string, string>; args: string[] } {
    const common = ['--net-conf', join(n.dir, 'net-conf.json'), '--iface', 'eth0', '--subnet-file', join(n.dir, 'run', 'subnet.env')];
    if (s === 'file') return { env: {}, args: [...common, '--store', `file:${join(n.dir, 'leases')}`] };
    if (s === 'etcd') return { env: {}, args: [...common, '--etcd-endpoints', etcd.url] };
    return { env: { NODE_NAME: n.netns }, args: ['--kube-subnet-mgr', '--kubeconfig-file', kube.kubeconfig, ...common] };
  }

  /** Everything a weftd start could have changed, as text. */
  async function state(s: StoreKind, n: SimNode): Promise<string> {
    const links = await nsExec(n.netns, ['sh', '-c', 'ip -o link show | sed -E "s/ link-netnsid [0-9]+//"; ip -o addr show | sed -E "s/valid_lft.*//"']);
    let store = '';
    if (s === 'etcd') store = await etcd.etcdctl(['get', '--prefix', '/']);
    if (s === 'kube') {
      const o = await kube.call('GET', `/api/v1/nodes/${n.netns}`) as { metadata: { annotations?: unknown }; status?: { conditions?: unknown } };
      store = JSON.stringify([o.metadata.annotations, o.status?.conditions ?? []]);
    }
    return [links.stdout, treeFingerprint(n.dir), store].join('\n## \n');
  }

  async function runWeftd(s: StoreKind, n: SimNode, args: string[], env: Record<string, string | null> = {}, without: string[] = []): Promise<{ code: number | null; stderr: string }> {
    const b = base(s, n);
    const e: Record<string, string | null> = { ...b.env, ...env };
    const envArgs = Object.entries(e).flatMap(([k, v]) => (v === null ? ['-u', k] : [`${k}=${v}`]));
    const fill = (a: string): string => a.replace('$DIR', n.dir).replace('$FILE', join(n.dir, 'file'));
    const r = await nsExec(n.netns, ['env', ...envArgs, WEFTD, ...baseWithout(b.args, without), ...args.map(fill)], { timeoutMs: 15_000 });
    // Errors found at start are a JSON log line: its error field is the message, quotes unescaped.
    const errors = r.stderr.split('\n').flatMap((l) => {
      try {
        const j = JSON.parse(l) as { error?: unknown };
        return typeof j.error === 'string' ? [j.error] : [];
      } catch {
        return [];
      }
    });
    return { code: r.code, stderr: [r.stderr, ...errors].join('\n') };
  }

  async function expectRefused(s: StoreKind, what: string, args: string[], env: FlagCase['env'], code: number, error: RegExp, without: string[] = []): Promise<void> {
    const n = node[s] as SimNode;
    const before = await state(s, n);
    const r = await runWeftd(s, n, args, env ?? {}, without);
    assert.equal(r.code, code, `${what} (${s}): exit code; stderr: ${r.stderr.slice(-600)}`);
    assert.match(r.stderr, error, `${what} (${s}): message`);
    assert.equal(await state(s, n), before, `${what} (${s}): something changed`);
  }

  // The stores run side by side (a node namespace each); within one, the working start comes last.
  for (const s of ['file', 'etcd', 'kube'] as const) {
    void it(`${s} store: every bad flag value and net-conf key, then the working command line`, async () => {
      for (const c of FLAG_CASES.filter((x) => (x.stores ?? ['file']).includes(s))) {
        await expectRefused(s, `${c.args.join(' ')} ${JSON.stringify(c.env ?? {})}`, c.args, c.env, c.stage === 'flags' ? 2 : 1, c.error, c.without);
      }
      const n = node[s] as SimNode;
      for (const [i, c] of NET_CONF_CASES.entries()) {
        const path = join(n.dir, `bad-${i}.json`);
        writeFileSync(path, JSON.stringify(c.conf));
        await expectRefused(s, JSON.stringify(c.conf), ['--net-conf', path], {}, 1, c.error);
      }
      await expectWorks(s, n);
    });
  }

  /** The working command line writes a lease and subnet.env (so the checks above could have seen one). */
  async function expectWorks(s: StoreKind, n: SimNode): Promise<void> {
    const before = await state(s, n);
    const b = base(s, n);
    const p = topo.spawnIn(n.netns, ['env', ...Object.entries(b.env).map(([k, v]) => `${k}=${v}`), WEFTD, ...b.args], join(n.dir, 'weftd.log'));
    try {
      const deadline = Date.now() + 20_000;
      while (!existsSync(join(n.dir, 'run', 'subnet.env'))) {
        assert.ok(Date.now() < deadline && p.exitCode === null, `weftd did not write subnet.env (exit ${String(p.exitCode)})`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const now = await state(s, n);
      assert.notEqual(now, before);
      if (s === 'etcd') assert.match(now, /\/coreos.com\/network\/subnets\/10\.244\./);
      if (s === 'kube') assert.match(now, /"flannel.alpha.coreos.com\/public-ip":"192\.0\.2\.1[0-9]"/);
      if (s === 'file') assert.ok(existsSync(join(n.dir, 'leases')));
    } finally {
      p.kill('SIGTERM');
    }
  }
});
