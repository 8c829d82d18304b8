// Issue 17, must show: weftd with flanneld's --etcd-* flags against a real etcd, first serving TLS
// with client certificates (a CA and certificates made here with openssl), then with
// username/password auth. The right credentials work; a wrong CA, a missing client certificate or
// a bad password give one clear error line and a non-zero exit, and nothing is written.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EtcdServer, type EtcdTls } from '../../../testkit/etcd.ts';
import { Topology } from '../../../testkit/topology.ts';
import { skipReason } from './helpers.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const WEFTD = join(ROOT, 'dist', 'bin', 'weftd');
const PREFIX = '/coreos.com/network';
const NET_CONF = '{"Network":"10.244.0.0/16","Backend":{"Type":"vxlan"}}';

/** A CA (key + self-signed certificate) named `name` in dir. */
function makeCa(dir: string, name: string): { pem: string; key: string } {
  const pem = join(dir, `${name}.pem`);
  const key = join(dir, `${name}.key`);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', pem, '-days', '1', '-subj', `/CN=${name}`], { stdio: 'ignore' });
  return { pem, key };
}

/** A certificate signed by ca with the given extensions; returns its PEM and key paths. */
function makeCert(dir: string, ca: { pem: string; key: string }, name: string, ext: string): { pem: string; key: string } {
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const pem = join(dir, `${name}.pem`);
  const extFile = join(dir, `${name}.ext`);
  writeFileSync(extFile, ext);
  execFileSync('openssl', ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', csr, '-subj', `/CN=${name}`], { stdio: 'ignore' });
  execFileSync('openssl', ['x509', '-req', '-in', csr, '-CA', ca.pem, '-CAkey', ca.key, '-CAcreateserial', '-out', pem, '-days', '1', '-extfile', extFile], { stdio: 'ignore' });
  return { pem, key };
}

void describe('weftd against etcd with TLS and auth (flanneld flags)', { skip: skipReason({ etcd: true }), timeout: 240_000 }, () => {
  let topo: Topology;
  let tlsEtcd: EtcdServer;
  let authEtcd: EtcdServer;
  let tls: EtcdTls;
  let wrongCa: string;
  let runs = 0;

  before(async () => {
    topo = await Topology.create({ nodes: 1 });
    const ca = makeCa(topo.dir, 'ca');
    wrongCa = makeCa(topo.dir, 'other-ca').pem;
    const server = makeCert(topo.dir, ca, 'server', 'subjectAltName=IP:192.0.2.2\nextendedKeyUsage=serverAuth\n');
    const client = makeCert(topo.dir, ca, 'client', 'extendedKeyUsage=clientAuth\n');
    tls = { ca: ca.pem, cert: server.pem, key: server.key, clientCert: client.pem, clientKey: client.key };
    tlsEtcd = await EtcdServer.create(topo, '192.0.2.2', { name: 'etcd', tls });
    await tlsEtcd.put(`${PREFIX}/config`, NET_CONF);
    authEtcd = await EtcdServer.create(topo, '192.0.2.3', { name: 'etcda' });
    await authEtcd.put(`${PREFIX}/config`, NET_CONF);
    await authEtcd.etcdctl(['user', 'add', 'root:rootpw', '--interactive=false']);
    await authEtcd.etcdctl(['auth', 'enable']);
  });
  after(() => topo?.destroySync());

  /** Runs weftd on node 1 with `args`; resolves once it exited (failure cases) or wrote subnet.env (then stops it). */
  async function weftd(args: string[], env: string[] = []): Promise<{ code: number | null; stderr: string; subnetFile: string }> {
    const n = topo.nodes[0];
    assert.ok(n);
    const subnetFile = join(n.dir, `subnet-${++runs}.env`);
    const log = join(n.dir, `weftd-${runs}.log`);
    const p = topo.spawnIn(n.netns, ['env', ...env, WEFTD, ...args, '--iface', 'eth0', '--subnet-file', subnetFile], log);
    const end = Date.now() + 60_000;
    while (p.exitCode === null && !existsSync(subnetFile) && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
    if (p.exitCode === null) {
      const closed = new Promise((r) => p.once('close', r));
      p.kill('SIGTERM');
      await closed;
    }
    const stderr = execFileSync('cat', [log], { encoding: 'utf8' });
    return { code: existsSync(subnetFile) ? 0 : p.exitCode, stderr, subnetFile };
  }

  /** Lease keys in etcd, read with etcdctl's own (right) credentials. */
  async function leaseKeys(e: EtcdServer, auth: string[] = []): Promise<string[]> {
    return (await e.etcdctl([...auth, 'get', '--prefix', '--keys-only', `${PREFIX}/subnets/`])).split('\n').filter(Boolean);
  }

  /** The one error weftd logged (asserts stderr is JSON log lines only, exactly one of level error). */
  function oneLine(stderr: string): string {
    const recs = stderr.split('\n').filter(Boolean).map((l) => {
      try { return JSON.parse(l) as { level: string; msg: string; error?: string }; } catch { assert.fail(`not a log line: ${l}`); }
    });
    const errors = recs.filter((r) => r.level === 'error');
    assert.equal(errors.length, 1, `one error line, got:\n${stderr}`);
    return `${errors[0]?.msg}: ${errors[0]?.error ?? ''}`;
  }

  it('TLS: a wrong CA and a missing client certificate fail with one clear line; nothing is written', async () => {
    const url = ['--etcd-endpoints', tlsEtcd.url];
    const bad = await weftd([...url, '--etcd-cafile', wrongCa, '--etcd-certfile', tls.clientCert, '--etcd-keyfile', tls.clientKey]);
    assert.notEqual(bad.code, 0);
    assert.match(oneLine(bad.stderr), /etcd .*https:\/\/192\.0\.2\.2:2379.*(certificate|handshake|TLS|SSL)/i);
    const noCert = await weftd([...url, '--etcd-cafile', tls.ca]);
    assert.notEqual(noCert.code, 0);
    assert.match(oneLine(noCert.stderr), /etcd .*https:\/\/192\.0\.2\.2:2379/);
    const missing = await weftd([...url, '--etcd-cafile', join(topo.dir, 'nope.pem'), '--etcd-certfile', tls.clientCert, '--etcd-keyfile', tls.clientKey]);
    assert.notEqual(missing.code, 0);
    assert.match(oneLine(missing.stderr), /--etcd-cafile ".*nope\.pem": ENOENT/);
    for (const r of [bad, noCert, missing]) assert.equal(existsSync(r.subnetFile), false);
    assert.deepEqual(await leaseKeys(tlsEtcd), []);
  });

  it('TLS: the right CA and client certificate take a lease', async () => {
    const ok = await weftd(['--etcd-endpoints', tlsEtcd.url, '-etcd-cafile=' + tls.ca, '-etcd-certfile=' + tls.clientCert, '-etcd-keyfile=' + tls.clientKey]);
    assert.equal(ok.code, 0, ok.stderr);
    const keys = await leaseKeys(tlsEtcd);
    assert.equal(keys.length, 1);
    assert.match(keys[0] as string, /subnets\/10\.244\.\d+\.0-24$/);
  });

  it('auth: a bad password fails with one clear line and writes nothing; the right one works', async () => {
    const url = ['--etcd-endpoints', authEtcd.url, '--etcd-username', 'root'];
    const bad = await weftd([...url, '--etcd-password', 'wrong']);
    assert.notEqual(bad.code, 0);
    assert.match(oneLine(bad.stderr), /etcd .*http:\/\/192\.0\.2\.3:2379.*(authentication failed|invalid user ID or password)/i);
    const none = await weftd(['--etcd-endpoints', authEtcd.url]);
    assert.notEqual(none.code, 0);
    assert.match(oneLine(none.stderr), /etcd .*http:\/\/192\.0\.2\.3:2379/);
    const root = ['--user', 'root:rootpw'];
    assert.deepEqual(await leaseKeys(authEtcd, root), []);
    for (const r of [bad, none]) assert.equal(existsSync(r.subnetFile), false);
    // As a flanneld unit with an EnvironmentFile would run it: everything from FLANNELD_*.
    const ok = await weftd([], [`FLANNELD_ETCD_ENDPOINTS=${authEtcd.url}`, 'FLANNELD_ETCD_USERNAME=root', 'FLANNELD_ETCD_PASSWORD=rootpw', 'FLANNELD_IPTABLES_FORWARD_RULES=true']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal((await leaseKeys(authEtcd, root)).length, 1);
  });

  it('a flanneld flag weftd cannot honour stops it with one line and exit 2, before touching etcd', async () => {
    const r = await weftd(['--etcd-endpoints', authEtcd.url, '--etcd-username', 'root', '--etcd-password', 'rootpw'], ['FLANNELD_IPTABLES_RESYNC=10']);
    assert.equal(r.code, 2);
    assert.deepEqual(r.stderr.trim().split('\n'), ['weftd: --iptables-resync=10: flanneld flag not supported by weftd (weftd uses nftables and re-applies its rules on its own period (--resync-interval)); remove it']);
    assert.equal((await leaseKeys(authEtcd, ['--user', 'root:rootpw'])).length, 1, 'still only the lease of the previous test');
  });
});
