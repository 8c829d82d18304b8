// `weft doctor` with weftd's own --etcd-* flags against an etcd serving TLS and requiring a user
// (a CA and certificates made here with openssl, as in test/e2e/cluster/etcd-tls.test.ts): a healthy
// node reports clean; a wrong CA or a bad password is one clear lease problem and a non-zero exit;
// the FLANNELD_* forms and the installed unit's flags work the same. A second etcd requires client
// certificates (no auth): without one doctor names the refusal, with one it reads the store.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EtcdServer } from '../../../testkit/etcd.ts';
import { waitFor } from '../../../testkit/cluster.ts';
import { Topology, nsExec, type SimNode } from '../../../testkit/topology.ts';
import { type DoctorReport, WEFT, skipReason } from './helpers.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const WEFTD = join(ROOT, 'dist', 'bin', 'weftd');
const NET_CONF = '{"Network":"10.244.0.0/16","Backend":{"Type":"vxlan"}}';
const noEtcd = ['/usr/bin/etcd', '/usr/local/bin/etcd'].some((p) => existsSync(p)) ? false : 'etcd not installed';

function openssl(args: string[]): void {
  execFileSync('openssl', args, { stdio: 'ignore' });
}

/** A CA in dir: its certificate and key. */
function makeCa(dir: string, name: string): { pem: string; key: string } {
  const pem = join(dir, `${name}.pem`);
  const key = join(dir, `${name}.key`);
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', pem, '-days', '1', '-subj', `/CN=${name}`]);
  return { pem, key };
}

/** A certificate signed by ca with the extensions `ext`. */
function makeCert(dir: string, ca: { pem: string; key: string }, name: string, ext: string): { pem: string; key: string } {
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const pem = join(dir, `${name}.pem`);
  writeFileSync(join(dir, `${name}.ext`), ext);
  openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', csr, '-subj', `/CN=${name}`]);
  openssl(['x509', '-req', '-in', csr, '-CA', ca.pem, '-CAkey', ca.key, '-CAcreateserial', '-out', pem, '-days', '1', '-extfile', join(dir, `${name}.ext`)]);
  return { pem, key };
}

void describe('weft doctor against etcd with TLS and auth', { skip: skipReason() || noEtcd, timeout: 180_000 }, () => {
  let topo: Topology;
  let etcd: EtcdServer;
  let certEtcd: EtcdServer;
  let clientCert: string[];
  let n: SimNode;
  let tlsFlags: string[];
  let wrongCa: string;
  let paths: string[];

  before(async () => {
    topo = await Topology.create({ nodes: 1 });
    n = topo.nodes[0] as SimNode;
    const ca = makeCa(topo.dir, 'ca');
    wrongCa = makeCa(topo.dir, 'other-ca').pem;
    // etcd's JSON gateway dials etcd itself with the server certificate: it must be a client one too.
    const server = makeCert(topo.dir, ca, 'server', 'subjectAltName=IP:192.0.2.2\nextendedKeyUsage=serverAuth,clientAuth\n');
    const server3 = makeCert(topo.dir, ca, 'server3', 'subjectAltName=IP:192.0.2.3\nextendedKeyUsage=serverAuth,clientAuth\n');
    const client = makeCert(topo.dir, ca, 'client', 'extendedKeyUsage=clientAuth\n');
    const tls = { ca: ca.pem, cert: server.pem, key: server.key, clientCert: client.pem, clientKey: client.key };
    etcd = await EtcdServer.create(topo, '192.0.2.2', { tls: { ...tls, clientCertAuth: false } });
    await etcd.put('/coreos.com/network/config', NET_CONF);
    await etcd.etcdctl(['user', 'add', 'root:rootpw', '--interactive=false']);
    await etcd.etcdctl(['auth', 'enable']);
    certEtcd = await EtcdServer.create(topo, '192.0.2.3', { name: 'etcdc', tls: { ...tls, cert: server3.pem, key: server3.key } });
    await certEtcd.put('/coreos.com/network/config', NET_CONF);
    tlsFlags = ['--etcd-endpoints', etcd.url, '--etcd-cafile', ca.pem];
    clientCert = ['--etcd-certfile', client.pem, '--etcd-keyfile', client.key];
    const subnetFile = join(n.dir, 'subnet.env');
    const confDir = join(n.dir, 'net.d');
    mkdirSync(confDir);
    mkdirSync(join(n.dir, 'ipam'));
    copyFileSync(join(ROOT, 'conf', 'weft-vxlan.conflist'), join(confDir, '10-weft.conflist'));
    paths = ['--iface', 'eth0', '--subnet-file', subnetFile, '--cni-conf-dir', confDir, '--cni-bin-dir', join(ROOT, 'dist', 'bin'), '--ipam-data-dir', join(n.dir, 'ipam'), '--metrics-addr', '127.0.0.1:9101'];
    const p = topo.spawnIn(n.netns, [WEFTD, ...tlsFlags, '--etcd-username', 'root', '--etcd-password', 'rootpw', '--iface', 'eth0', '--subnet-file', subnetFile, '--metrics-addr', '127.0.0.1:9101'], join(n.dir, 'weftd.log'));
    await waitFor('weftd healthy', async () => {
      if (p.exitCode !== null) throw new Error(`weftd exited ${p.exitCode}: ${execFileSync('cat', [join(n.dir, 'weftd.log')], { encoding: 'utf8' })}`);
      return (await nsExec(n.netns, ['curl', '-fsS', '--max-time', '1', 'http://127.0.0.1:9101/healthz'])).code === 0;
    }, 30_000, 100);
  });
  after(() => topo?.destroySync());

  /** Runs `weft doctor --json` in the node with `args` (and `env`); the exit code must agree with ok. */
  async function doctor(args: string[], env: string[] = []): Promise<{ code: number | null; report: DoctorReport }> {
    const r = await nsExec(n.netns, ['env', ...env, 'node', WEFT, 'doctor', '--json', '--unit', '/dev/null', ...paths, ...args], { timeoutMs: 20_000 });
    assert.ok(r.code === 0 || r.code === 1, `doctor exit ${String(r.code)}: ${r.stderr}`);
    const report = JSON.parse(r.stdout) as DoctorReport;
    assert.equal(r.code === 0, report.ok);
    return { code: r.code, report };
  }

  it('the right CA and password: clean, the lease read from etcd', async () => {
    const { code, report } = await doctor([...tlsFlags, '--etcd-username', 'root', '--etcd-password', 'rootpw']);
    assert.equal(code, 0, JSON.stringify(report.problems));
    const lease = report.checks.find((c) => c.check === 'lease');
    assert.match(String(lease?.facts['source']), /^etcd:https:\/\/192\.0\.2\.2:2379$/);
    assert.match(String(lease?.facts['subnet']), /^10\.244\.\d+\.0\/24$/);
  });

  it('the same from FLANNELD_* variables and flanneld syntax', async () => {
    const [, url, , ca] = tlsFlags;
    const { code, report } = await doctor([`-etcd-cafile=${ca}`], [`FLANNELD_ETCD_ENDPOINTS=${url}`, 'FLANNELD_ETCD_USERNAME=root', 'FLANNELD_ETCD_PASSWORD=rootpw']);
    assert.equal(code, 0, JSON.stringify(report.problems));
  });

  it('the installed unit\'s flags, its password in the EnvironmentFile', async () => {
    const envFile = join(n.dir, 'weftd.env');
    writeFileSync(envFile, 'WEFTD_ETCD_PASSWORD="rootpw"\n', { mode: 0o600 });
    const unit = join(n.dir, 'weftd.service');
    writeFileSync(unit, `[Service]\nEnvironmentFile=${envFile}\nExecStart=${WEFTD} ${tlsFlags.join(' ').replace(/--(etcd-\w+) /g, '--$1=')} --etcd-username=root --etcd-password=\${WEFTD_ETCD_PASSWORD} --ip-masq\n`);
    const r = await nsExec(n.netns, ['node', WEFT, 'doctor', '--json', ...paths, '--unit', unit], { timeoutMs: 20_000 });
    assert.equal(r.code, 0, r.stdout + r.stderr);
  });

  it('a wrong CA: one lease problem naming the certificate failure, exit 1', async () => {
    const flags = [...tlsFlags];
    flags[3] = wrongCa;
    const { code, report } = await doctor([...flags, '--etcd-username', 'root', '--etcd-password', 'rootpw']);
    assert.equal(code, 1);
    const lease = report.problems.filter((p) => p.check === 'lease');
    assert.equal(lease.length, 1, JSON.stringify(report.problems));
    assert.match(lease[0]?.detail ?? '', /^cannot read the lease source: etcd https:\/\/192\.0\.2\.2:2379: .*(certificate|self.signed)/i);
    assert.match(lease[0]?.fix ?? '', /--etcd-cafile/);
  });

  it('a bad password: one lease problem saying authentication failed, exit 1', async () => {
    const { code, report } = await doctor([...tlsFlags, '--etcd-username', 'root', '--etcd-password', 'wrong']);
    assert.equal(code, 1);
    const lease = report.problems.filter((p) => p.check === 'lease');
    assert.equal(lease.length, 1, JSON.stringify(report.problems));
    assert.match(lease[0]?.detail ?? '', /^cannot read the lease source: etcd https:\/\/192\.0\.2\.2:2379: .*authentication failed/i);
  });

  it('client certificates: refused without one, read with one (this node has no lease in that etcd)', async () => {
    const flags = ['--etcd-endpoints', certEtcd.url, '--etcd-cafile', tlsFlags[3] as string];
    const without = (await doctor(flags)).report.problems.filter((p) => p.check === 'lease');
    assert.equal(without.length, 1, JSON.stringify(without));
    assert.match(without[0]?.detail ?? '', /^cannot read the lease source: etcd https:\/\/192\.0\.2\.3:2379: /);
    const withCert = (await doctor([...flags, ...clientCert])).report.problems.filter((p) => p.check === 'lease');
    assert.deepEqual(withCert.map((p) => p.detail.split(' for ')[0]), ['no lease in etcd:https://192.0.2.3:2379']);
  });
});
