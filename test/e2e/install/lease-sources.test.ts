// The built `weft install` with each lease source, into temp dirs: the file store refused without
// --single-node (exit 2, nothing written), --dry-run printing the conflist and unit and writing
// nothing, an etcd install whose unit the installed weftd itself accepts (its TLS flags reach the
// etcd client: a missing CA file is named), and --kube-subnet-mgr accepted once weftd has it.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createTestNetns, inNetns } from '../../../testkit/netns.ts';
import { diffTrees, dirFlags, hashTree, runCmd, weft, WEFT } from './helpers.ts';

const temps: string[] = [];
function tempRoot(): string {
  const t = mkdtempSync(join(tmpdir(), 'weft-install-ls-'));
  temps.push(t);
  return t;
}

describe('weft install lease sources', () => {
  before(() => {
    assert.ok(existsSync(WEFT), `${WEFT} is missing: run npm run build`);
  });
  after(() => {
    for (const t of temps) rmSync(t, { recursive: true, force: true });
  });

  test('a flannel backend without a lease source exits 2, says why the file store is one machine only, writes nothing', async () => {
    const t = tempRoot();
    const before = hashTree(t);
    const r = await weft(['install', '--backend', 'host-gw', ...dirFlags(t)]);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stderr, /--backend host-gw needs a lease source: --kube-subnet-mgr .*--etcd-endpoints .*--single-node .*nodes never learn each other's subnets/);
    assert.deepEqual(diffTrees(before, hashTree(t)), []);
  });

  test('--dry-run shows the conflist and the unit that would be written, the password hidden, and writes nothing', async () => {
    const t = tempRoot();
    const before = hashTree(t);
    const r = await weft(['install', '--dry-run', '--backend', 'flannel-vxlan', '--etcd-endpoints', 'https://192.0.2.10:2379',
      '--etcd-username', 'node', '--etcd-password', 'hunter2', ...dirFlags(t)]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^--- ${join(t, 'etc/cni/net.d/10-weft.conflist')} \\(conflist\\)\\n\\{\\n  "cniVersion": "1\\.0\\.0"`, 'm'));
    assert.match(r.stdout, /^ExecStart=\S+weftd --etcd-endpoints=https:\/\/192\.0\.2\.10:2379 --etcd-username=node --etcd-password=\$\{WEFTD_ETCD_PASSWORD\} /m);
    assert.match(r.stdout, /^WEFTD_ETCD_PASSWORD=<hidden>$/m);
    assert.doesNotMatch(r.stdout + r.stderr, /hunter2/);
    assert.match(r.stdout, /^note: weftd reads the network config from etcd \/coreos\.com\/network\/config/m);
    assert.deepEqual(diffTrees(before, hashTree(t)), []);
  });

  test('etcd with TLS: the installed weftd accepts the unit\'s flags and reads the CA file they name', async () => {
    const t = tempRoot();
    const ca = join(t, 'pki/ca.pem');
    const r = await weft(['install', '--backend', 'flannel-vxlan', '--etcd-endpoints', 'https://192.0.2.10:2379', '--etcd-prefix', '/weft',
      '--etcd-cafile', ca, '--etcd-username', 'node', '--etcd-password', 'hunter2', ...dirFlags(t)]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`warning: ${ca} does not exist yet`));
    const env = join(t, 'etc/weft/weftd.env');
    assert.equal(statSync(env).mode & 0o777, 0o600);
    const unit = readFileSync(join(t, 'etc/systemd/system/weftd.service'), 'utf8');
    assert.ok(!unit.includes('hunter2'), 'the password is not in the 0644 unit');
    // Run ExecStart as systemd would (password expanded from the env file), in a network namespace
    // of the test kit's (deleted right after) with an address on lo as its uplink:
    // weftd parses every flag, then fails at the CA file, before any connection.
    const exec = (/^ExecStart=(.*)$/m.exec(unit)?.[1] ?? '').split(' ').map((a) => a.replace('${WEFTD_ETCD_PASSWORD}', 'hunter2'));
    const ns = await createTestNetns('weft-t-inst');
    const d = await runCmd(inNetns(ns.name, ['sh', '-c', 'ip link set lo up && ip addr add 192.0.2.1/32 dev lo && exec "$@"', 'sh', ...exec, '--iface=lo']));
    await ns.destroy();
    assert.equal(d.code, 1, d.stdout + d.stderr);
    const failure = d.stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { msg: string; error?: string }).find((l) => l.msg === 'weftd failed to start');
    assert.equal(failure?.error?.startsWith(`--etcd-cafile "${ca}": ENOENT`), true, d.stderr);
    const u = await weft(['uninstall', '--state-dir', join(t, 'var/lib/weft/install')]);
    assert.equal(u.code, 0, u.stderr);
    assert.ok(!existsSync(env));
  });

  test('--kube-subnet-mgr: the weftd being installed has it, so the unit runs it (dry run)', async () => {
    const t = tempRoot();
    // Without credentials (and not in a pod) the unit could never reach the API: refused, nothing written.
    const refused = await weft(['install', '--dry-run', '--backend', 'flannel-vxlan', '--kube-subnet-mgr', ...dirFlags(t)]);
    assert.notEqual(refused.code, 0, refused.stdout);
    assert.match(refused.stderr, /credentials for the Kubernetes API/);
    const kubeconfig = join(t, 'kubelet.conf');
    writeFileSync(kubeconfig, 'apiVersion: v1\nkind: Config\n');
    const before = hashTree(t);
    const r = await weft(['install', '--dry-run', '--backend', 'flannel-vxlan', '--kube-subnet-mgr', '--kubeconfig-file', kubeconfig, '--node-name', 'node-a', ...dirFlags(t)]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^ExecStart=\S+weftd --net-conf=\S+ --kube-subnet-mgr --kubeconfig-file=\S+kubelet\.conf /m);
    assert.match(r.stdout, /^Environment=NODE_NAME=node-a$/m);
    assert.deepEqual(diffTrees(before, hashTree(t)), []);
  });
});
