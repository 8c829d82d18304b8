// Lease sources of `weft install`: the file store refused without --single-node (saying why), etcd
// with TLS/auth rendered into the unit (password only in the 0600 env file), --kube-subnet-mgr only
// when the installed weftd has it (with NODE_NAME and credentials in the unit), --net-conf naming an existing file, and --dry-run's preview.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { runWeftCli } from '../../../../cli/program.ts';
import { install } from '../../../../cli/install/install.ts';
import { normalizeLeaseSource, renderWeftdEnv } from '../../../../cli/install/lease-source.ts';
import { InstallOptionError, normalizeInstallOptions, type RawInstallOptions } from '../../../../cli/install/options.ts';
import { pluginNames } from '../../../../cli/install/plan.ts';
import { renderWeftdUnit } from '../../../../cli/install/render.ts';

const temps: string[] = [];
after(() => {
  for (const t of temps) rmSync(t, { recursive: true, force: true });
});

/** A fake build whose weftd prints `help` for --help; dirs under a fresh temp root. */
function fixture(weftdHelp = 'Options:\n  --etcd-endpoints <urls>\n'): { t: string; base: RawInstallOptions } {
  const t = mkdtempSync(join(tmpdir(), 'weft-install-lease-'));
  temps.push(t);
  const src = join(t, 'src');
  mkdirSync(src);
  for (const n of pluginNames()) writeFileSync(join(src, n), `#!/bin/sh\necho ${n}\n`);
  writeFileSync(join(src, 'weftd'), `#!/bin/sh\ncat <<'EOF'\n${weftdHelp}EOF\n`);
  for (const n of [...pluginNames(), 'weftd']) chmodSync(join(src, n), 0o755);
  const base: RawInstallOptions = {
    sourceDir: src, backend: 'flannel-vxlan', binDir: join(t, 'bin'), confDir: join(t, 'conf'), unitDir: join(t, 'unit'),
    agentDir: join(t, 'sbin'), weftConfDir: join(t, 'weft'), stateDir: join(t, 'state'),
  };
  return { t, base };
}

const KUBE_HELP = 'Options:\n  --kube-subnet-mgr  subnets from the Kubernetes API\n';
// The refusals below are those of a machine outside any pod, even when the tests run in one.
delete process.env['KUBERNETES_SERVICE_HOST'];

const refuses = (raw: RawInstallOptions, re: RegExp): void => {
  assert.throws(() => install(normalizeInstallOptions(raw)), (e: unknown) => e instanceof InstallOptionError && re.test(e.message), `expected ${re}`);
};

describe('lease source options', () => {
  test('a flannel backend with no lease source is refused, saying why the file store is one machine only', () => {
    const { base } = fixture();
    refuses(base, /--backend flannel-vxlan needs a lease source: --kube-subnet-mgr for a Kubernetes cluster .*--etcd-endpoints .* or --single-node .*nodes never learn each other's subnets/);
  });

  test('contradictions and half-given options name the option', () => {
    const { base } = fixture();
    const url = 'https://10.0.0.1:2379';
    refuses({ ...base, singleNode: true, etcdEndpoints: url }, /^--etcd-endpoints and --single-node: choose one lease source$/);
    refuses({ ...base, singleNode: true, etcdCafile: '/ca.pem' }, /^--etcd-cafile need --etcd-endpoints$/);
    refuses({ ...base, etcdEndpoints: '10.0.0.1:2379' }, /^--etcd-endpoints: "10\.0\.0\.1:2379" is not a URL/);
    refuses({ ...base, etcdEndpoints: url, etcdCertfile: '/c.pem' }, /^--etcd-certfile and --etcd-keyfile go together$/);
    refuses({ ...base, etcdEndpoints: url, etcdPassword: 'x' }, /^--etcd-password needs --etcd-username$/);
    refuses({ ...base, etcdEndpoints: url, etcdCafile: 'ca.pem' }, /^--etcd-cafile: "ca\.pem" must be an absolute path/);
    refuses({ ...base, etcdEndpoints: url, etcdPrefix: 'x' }, /^--etcd-prefix: "x" must start with "\/"$/);
    refuses({ ...base, backend: 'bridge', etcdEndpoints: url }, /^--etcd-endpoints: the bridge backend runs no weftd/);
  });

  test('--single-node: the file store and a written net-conf, as before', () => {
    const { base } = fixture();
    const opts = normalizeInstallOptions({ ...base, singleNode: true });
    install(opts);
    const unit = readFileSync(join(opts.unitDir, 'weftd.service'), 'utf8');
    assert.match(unit, /^ExecStart=\S+\/weftd --net-conf=\S+\/weft\/net-conf\.json --store=file:\/var\/lib\/weft\/leases --subnet-file=\/run\/flannel\/subnet\.env --ip-masq --metrics-addr=127\.0\.0\.1:9101$/m);
    assert.ok(existsSync(join(opts.weftConfDir, 'net-conf.json')));
  });

  test('etcd with TLS and auth: flanneld\'s flag names in the unit, the password only in a 0600 env file; no net-conf written', () => {
    const { base } = fixture();
    const opts = normalizeInstallOptions({
      ...base, etcdEndpoints: 'https://10.0.0.1:2379,https://10.0.0.2:2379', etcdPrefix: '/weft/net', etcdCafile: '/etc/weft/ca.pem',
      etcdCertfile: '/etc/weft/c.pem', etcdKeyfile: '/etc/weft/k.pem', etcdUsername: 'node', etcdPassword: 'p"a\\ss $w',
    });
    const r = install(opts);
    const unit = readFileSync(join(opts.unitDir, 'weftd.service'), 'utf8');
    const exec = /^ExecStart=(.*)$/m.exec(unit)?.[1] ?? '';
    assert.deepEqual(exec.split(' ').slice(1), [
      '--etcd-endpoints=https://10.0.0.1:2379,https://10.0.0.2:2379', '--etcd-prefix=/weft/net', '--etcd-cafile=/etc/weft/ca.pem',
      '--etcd-certfile=/etc/weft/c.pem', '--etcd-keyfile=/etc/weft/k.pem', '--etcd-username=node', '--etcd-password=${WEFTD_ETCD_PASSWORD}',
      '--subnet-file=/run/flannel/subnet.env', '--ip-masq', '--metrics-addr=127.0.0.1:9101',
    ]);
    assert.doesNotMatch(unit, /p"a/);
    const envPath = join(opts.weftConfDir, 'weftd.env');
    assert.match(unit, new RegExp(`^EnvironmentFile=${envPath}$`, 'm'));
    assert.equal(statSync(envPath).mode & 0o777, 0o600);
    assert.match(readFileSync(envPath, 'utf8'), /^WEFTD_ETCD_PASSWORD="p\\"a\\\\ss \$w"$/m);
    assert.ok(!existsSync(join(opts.weftConfDir, 'net-conf.json')), 'flannel reads <prefix>/config from etcd');
    assert.ok(r.notes.some((n) => n.includes("etcdctl put /weft/net/config '{\"Network\":\"10.244.0.0/16\",\"SubnetLen\":24,\"Backend\":{\"Type\":\"vxlan\"}}'")), r.notes.join('\n'));
    assert.ok(r.warnings.some((w) => w.startsWith('/etc/weft/ca.pem does not exist yet')), r.warnings.join('\n'));
  });

  test('no password: no env file and no EnvironmentFile=', () => {
    assert.equal(renderWeftdEnv({ kind: 'etcd', endpoints: ['http://a:2379'] }), undefined);
    assert.doesNotMatch(renderWeftdUnit({ agentDir: '/a', weftConfDir: '/c', leaseSource: { kind: 'etcd', endpoints: ['http://a:2379'] } }), /EnvironmentFile|--net-conf/);
  });

  test('--kube-subnet-mgr is refused while the installed weftd lacks it, accepted once its --help lists it', () => {
    const { t: t0, base } = fixture();
    writeFileSync(join(t0, 'kubelet.conf'), '{}');
    refuses({ ...base, kubeSubnetMgr: true, kubeconfigFile: join(t0, 'kubelet.conf') }, /^--kube-subnet-mgr: the weftd being installed .* has no Kubernetes subnet manager yet/);
    assert.ok(!existsSync(join(base.unitDir as string, 'weftd.service')), 'nothing written');
    const k = fixture(KUBE_HELP);
    const kubeconfig = join(k.t, 'kubelet.conf');
    writeFileSync(kubeconfig, '{}');
    const opts = normalizeInstallOptions({ ...k.base, kubeSubnetMgr: true, kubeconfigFile: kubeconfig, nodeName: 'worker-1' });
    install(opts);
    assert.match(readFileSync(join(opts.unitDir, 'weftd.service'), 'utf8'), new RegExp(`--net-conf=\\S+net-conf\\.json --kube-subnet-mgr --kubeconfig-file=${kubeconfig} --subnet-file=`));
  });

  test('--kube-subnet-mgr: the unit gives weftd NODE_NAME (the host name unless --node-name) and --kubeconfig-file; --dry-run shows it', () => {
    const { t, base } = fixture(KUBE_HELP);
    const kubeconfig = join(t, 'kubelet.conf');
    writeFileSync(kubeconfig, '{}');
    const named = normalizeInstallOptions({ ...base, kubeSubnetMgr: true, kubeconfigFile: kubeconfig, nodeName: 'worker-7.example.com' });
    assert.deepEqual(named.leaseSource, { kind: 'kube', nodeName: 'worker-7.example.com', kubeconfigFile: kubeconfig });
    const r = install({ ...named, dryRun: true });
    const unit = r.preview?.find((p) => p.what === 'systemd unit')?.text ?? '';
    assert.match(unit, /^Environment=NODE_NAME=worker-7\.example\.com$/m);
    assert.match(unit, new RegExp(`^ExecStart=\\S+weftd --net-conf=\\S+ --kube-subnet-mgr --kubeconfig-file=${kubeconfig} `, 'm'));
    assert.ok(!existsSync(join(t, 'unit')), 'dry run writes nothing');
    const dflt = normalizeLeaseSource({ kubeSubnetMgr: true, kubeconfigFile: kubeconfig }, 'flannel-vxlan', true, { env: {}, hostname: () => 'Node-A', exists: () => true });
    assert.deepEqual(dflt, { kind: 'kube', nodeName: 'node-a', kubeconfigFile: kubeconfig }, 'the host name, lower-cased as kubelet registers it');
  });

  test('weft install --kube-subnet-mgr --kubeconfig-file --node-name --dry-run on the command line', async () => {
    const { t, base } = fixture(KUBE_HELP);
    const kubeconfig = join(t, 'kubelet.conf');
    writeFileSync(kubeconfig, '{}');
    const dirs = ['--source', base.sourceDir, '--bin-dir', join(t, 'bin'), '--conf-dir', join(t, 'conf'), '--unit-dir', join(t, 'unit'), '--agent-dir', join(t, 'sbin'), '--weft-conf-dir', join(t, 'weft'), '--state-dir', join(t, 'state')];
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (x: string) => void out.push(x), err: (x: string) => void err.push(x) };
    assert.equal(await runWeftCli(['install', '--backend', 'host-gw', '--kube-subnet-mgr', '--kubeconfig-file', kubeconfig, '--node-name', 'w9', '--dry-run', ...dirs], io), 0, err.join(''));
    assert.match(out.join(''), /^Environment=NODE_NAME=w9$/m);
    assert.match(out.join(''), / --kube-subnet-mgr --kubeconfig-file=\S+kubelet\.conf /);
    assert.equal(await runWeftCli(['install', '--backend', 'host-gw', '--kube-subnet-mgr', '--dry-run', ...dirs], io), 2);
    assert.match(err.join(''), /weft: --kube-subnet-mgr needs credentials/);
    assert.ok(!existsSync(join(t, 'unit')), 'nothing written');
  });

  test('--kube-subnet-mgr without credentials is refused outside a pod, and uses the pod\'s service address inside one', () => {
    const { t, base } = fixture(KUBE_HELP);
    refuses({ ...base, kubeSubnetMgr: true, nodeName: 'w1' }, /^--kube-subnet-mgr needs credentials for the Kubernetes API: --kubeconfig-file PATH .* not a pod/);
    refuses({ ...base, kubeSubnetMgr: true, nodeName: 'w1', kubeconfigFile: join(t, 'nope.conf') }, /^--kubeconfig-file: \S+nope\.conf does not exist/);
    refuses({ ...base, kubeSubnetMgr: true, nodeName: 'w1', kubeconfigFile: 'kubelet.conf' }, /^--kubeconfig-file: "kubelet\.conf" must be an absolute path/);
    refuses({ ...base, kubeSubnetMgr: true, nodeName: 'Worker_1', kubeconfigFile: '/x' }, /^--node-name: "Worker_1" is not a Kubernetes node name/);
    refuses({ ...base, singleNode: true, nodeName: 'w1' }, /^--node-name need --kube-subnet-mgr$/);
    refuses({ ...base, etcdEndpoints: 'http://a:2379', kubeconfigFile: '/k' }, /^--kubeconfig-file need --kube-subnet-mgr$/);
    assert.ok(!existsSync(join(t, 'unit')), 'nothing written');
    const pod = { env: { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' }, hostname: () => 'w1', exists: (p: string) => p.endsWith('/serviceaccount/token') };
    const src = normalizeLeaseSource({ kubeSubnetMgr: true }, 'host-gw', true, pod);
    assert.deepEqual(src, { kind: 'kube', nodeName: 'w1', inCluster: { host: '10.96.0.1', port: '443' } });
    const unit = renderWeftdUnit({ agentDir: '/a', weftConfDir: '/c', leaseSource: src });
    assert.match(unit, /^Environment=KUBERNETES_SERVICE_HOST=10\.96\.0\.1\nEnvironment=KUBERNETES_SERVICE_PORT=443$/m);
    assert.doesNotMatch(unit, /--kubeconfig-file/);
    assert.throws(() => normalizeLeaseSource({ kubeSubnetMgr: true }, 'host-gw', true, { ...pod, exists: () => false }), /needs credentials/);
  });

  test('--net-conf names an existing file: the unit points at it, nothing copied; a backend mismatch is refused', () => {
    const { t, base } = fixture();
    const nc = join(t, 'kube-flannel-net-conf.json');
    writeFileSync(nc, '{"network":"10.50.0.0/16","backend":{"type":"vxlan"}}');
    const opts = normalizeInstallOptions({ ...base, etcdEndpoints: 'http://10.0.0.1:2379', netConf: nc });
    const r = install(opts);
    assert.match(readFileSync(join(opts.unitDir, 'weftd.service'), 'utf8'), new RegExp(`ExecStart=\\S+ --net-conf=${nc} --etcd-endpoints=`));
    assert.ok(!r.written.some((w) => w.what === 'weftd net-conf'));
    assert.deepEqual(r.notes, [], 'the config is the given file, not etcd\'s');
    refuses({ ...base, singleNode: true, backend: 'host-gw', netConf: nc }, /^--net-conf: .* has Backend\.Type "vxlan" but --backend host-gw is "host-gw"$/);
    refuses({ ...base, singleNode: true, netConf: join(t, 'missing.json') }, /^--net-conf: .*missing\.json: ENOENT/);
  });

  test('--dry-run previews the conflist and unit, hides the password, writes nothing', () => {
    const { t, base } = fixture();
    const opts = normalizeInstallOptions({ ...base, dryRun: true, etcdEndpoints: 'http://10.0.0.1:2379', etcdUsername: 'u', etcdPassword: 'sekret' });
    const r = install(opts);
    assert.deepEqual((r.preview ?? []).map((p) => p.what), ['conflist', 'weftd secrets', 'systemd unit']);
    assert.match(r.preview?.[0]?.text ?? '', /"type": "flannel"/);
    assert.match(r.preview?.[2]?.text ?? '', /^ExecStart=.*--etcd-endpoints=http:\/\/10\.0\.0\.1:2379 /m);
    assert.equal(r.preview?.[1]?.text.includes('sekret'), false);
    assert.match(r.preview?.[1]?.text ?? '', /^WEFTD_ETCD_PASSWORD=<hidden>$/m);
    for (const d of ['bin', 'conf', 'unit', 'weft', 'state']) assert.ok(!existsSync(join(t, d)), `${d} not created`);
  });
});
