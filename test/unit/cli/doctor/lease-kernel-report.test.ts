// The doctor's lease, weftd-health and kernel judgements, its options, and the report's two forms.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkLease } from '../../../../cli/doctor/check-lease.ts';
import { judgeHealth, parseMetrics } from '../../../../cli/doctor/check-health.ts';
import { judgeKernel, kernelVersion, neededModules } from '../../../../cli/doctor/check-kernel.ts';
import { DoctorOptionError, normalizeDoctorOptions } from '../../../../cli/doctor/options.ts';
import { buildReport, formatReportJson, formatReportTable } from '../../../../cli/doctor/problem.ts';
import { NET_CONF, OWN, PEER } from './fixtures.ts';

const ENV_TEXT = 'FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.1.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=false\n';
const VIEW = { source: 'file:/l', netConf: NET_CONF, leases: [OWN, PEER] };
const base = { view: VIEW, publicIp: '192.0.2.11', subnetFile: '/run/flannel/subnet.env', subnetEnvText: ENV_TEXT, now: 1_000_000 };

describe('checkLease', () => {
  test('a held lease matching subnet.env is clean, with its facts', () => {
    const r = checkLease(base);
    assert.deepEqual(r.problems, []);
    assert.equal(r.facts['subnet'], '10.244.1.0/24');
    assert.equal(r.env?.mtu, 1450);
  });
  test('no subnet.env, no lease, an expired lease, subnet.env on another subnet: each named', () => {
    assert.match(checkLease({ ...base, subnetEnvText: null }).problems[0]?.detail ?? '', /subnet\.env does not exist/);
    assert.match(checkLease({ ...base, publicIp: '192.0.2.99' }).problems[0]?.detail ?? '', /no lease in file:\/l for this node's public IP 192\.0\.2\.99/);
    const expired = checkLease({ ...base, view: { ...VIEW, leases: [{ ...OWN, expiration: 940_000 }, PEER] } });
    assert.deepEqual(expired.problems.map((p) => p.detail), ['lease 10.244.1.0/24 expired 60 s ago: another node may take the subnet']);
    const moved = checkLease({ ...base, subnetEnvText: ENV_TEXT.replace('10.244.1.1/24', '10.244.9.1/24') });
    assert.deepEqual(moved.problems.map((p) => p.detail), ['subnet.env FLANNEL_SUBNET=10.244.9.1/24 but this node\'s lease is 10.244.1.0/24: new pods get addresses the cluster routes elsewhere']);
  });
  test('an unreadable lease source and two leases for one node are named', () => {
    assert.match(checkLease({ ...base, view: { error: 'ENOENT' } }).problems[0]?.detail ?? '', /cannot read the lease source: ENOENT/);
    const dup = checkLease({ ...base, view: { ...VIEW, leases: [OWN, { ...OWN, subnet: '10.244.5.0/24' }] } });
    assert.match(dup.problems[0]?.detail ?? '', /^2 leases name this node's public IP 192\.0\.2\.11: 10\.244\.1\.0\/24, 10\.244\.5\.0\/24/);
  });
});

describe('judgeHealth', () => {
  test('unreachable, unhealthy and route conflicts are problems; 200 with no conflicts is clean', () => {
    assert.match(judgeHealth('127.0.0.1:9101', { error: 'ECONNREFUSED' }, null).problems[0]?.detail ?? '', /does not answer .*ECONNREFUSED/);
    assert.match(judgeHealth('a:1', { status: 503, body: 'unhealthy: x' }, null).problems[0]?.detail ?? '', /HTTP 503/);
    const m = parseMetrics('# HELP x\nweftd_route_conflicts 2\nweftd_leases 3\nweftd_programmed_entries{kind="route"} 2\n');
    assert.equal(m.get('weftd_programmed_entries{kind="route"}'), 2);
    assert.match(judgeHealth('a:1', { status: 200, body: 'ok' }, m).problems[0]?.detail ?? '', /2 route\(s\)/);
    assert.deepEqual(judgeHealth('a:1', { status: 200, body: 'ok' }, parseMetrics('weftd_route_conflicts 0\n')).problems, []);
  });
});

describe('kernel', () => {
  test('the VXLAN checksum bug is named below 5.7 for vxlan only', () => {
    assert.deepEqual(kernelVersion('5.4.0-150-generic'), [5, 4]);
    const old = judgeKernel({ release: '5.4.0-150-generic', backend: 'vxlan', modules: [] });
    assert.match(old.problems[0]?.detail ?? '', /older than 5\.7/);
    assert.deepEqual(judgeKernel({ release: '5.4.0', backend: 'host-gw', modules: [] }).problems, []);
    assert.deepEqual(judgeKernel({ release: '5.7.0', backend: 'vxlan', modules: [] }).problems, []);
    assert.deepEqual(judgeKernel({ release: '4.19.0', backend: 'vxlan', modules: [] }).problems.length, 1);
    assert.deepEqual(judgeKernel({ release: '4.19.0', backend: 'vxlan', modules: [], vtepTxChecksum: true }).problems.length, 1);
    assert.deepEqual(judgeKernel({ release: '4.19.0', backend: 'vxlan', modules: [], vtepTxChecksum: false }).problems, [], 'workaround in place');
  });
  test('missing modules are problems with modprobe; unknown ones are facts', () => {
    const r = judgeKernel({ release: '6.1', backend: 'vxlan', modules: [{ name: 'vxlan', why: 'v', state: 'missing' }, { name: 'ifb', why: 'b', state: 'unknown' }, { name: 'bridge', why: 'c', state: 'present' }] });
    assert.deepEqual(r.problems.map((p) => p.fix), ['modprobe vxlan and list it in /etc/modules-load.d/weft.conf']);
    assert.equal(r.facts['unverifiedModules'], 'ifb');
  });
  test('the needed modules follow the backend and the node', () => {
    const names = (b: string | null, o = { kubelet: false, bandwidth: false }): string[] => neededModules(b, o).map((m) => m.name);
    assert.deepEqual(names('vxlan'), ['bridge', 'veth', 'nf_tables', 'vxlan']);
    assert.deepEqual(names('udp', { kubelet: true, bandwidth: true }), ['bridge', 'veth', 'nf_tables', 'tun', 'br_netfilter', 'ifb']);
  });
});

describe('normalizeDoctorOptions', () => {
  test('defaults are the installed paths', () => {
    const o = normalizeDoctorOptions({});
    assert.equal(o.subnetFile, '/run/flannel/subnet.env');
    assert.equal(o.store, 'file:/var/lib/weft/leases');
    assert.equal(o.netConf, '/etc/weft/net-conf.json');
    assert.equal(o.ipamDataDir, '/var/lib/cni/networks');
    assert.equal(o.bridge, 'cni0');
    assert.equal(normalizeDoctorOptions({ etcdEndpoints: 'http://a:2379' }).netConf, undefined, 'etcd: net-conf from <prefix>/config');
  });
  test('etcd TLS and auth flags as weftd takes them; an --etcd-* flag alone means flanneld\'s default endpoints', () => {
    const o = normalizeDoctorOptions({ etcdEndpoints: 'https://e:2379', etcdCafile: '/ca.pem', etcdCertfile: '/c.pem', etcdKeyfile: '/k.pem', etcdUsername: 'root', etcdPassword: 'pw' });
    assert.deepEqual(o.etcdEndpoints, ['https://e:2379']);
    assert.deepEqual(o.etcdSecurity, { cafile: '/ca.pem', certfile: '/c.pem', keyfile: '/k.pem', username: 'root', password: 'pw' });
    assert.deepEqual(normalizeDoctorOptions({}).etcdSecurity, {});
    const p = normalizeDoctorOptions({ etcdPrefix: '/x' });
    assert.deepEqual([p.etcdEndpoints, p.etcdPrefix], [['http://127.0.0.1:4001', 'http://127.0.0.1:2379'], '/x']);
  });
  test('bad flags are refused naming the flag', () => {
    assert.throws(() => normalizeDoctorOptions({ store: 'file:/a', etcdEndpoints: 'http://a:1' }), DoctorOptionError);
    assert.throws(() => normalizeDoctorOptions({ store: '/a' }), /--store "\/a"/);
    assert.throws(() => normalizeDoctorOptions({ store: 'file:/a', etcdCafile: '/ca.pem' }), /--etcd-cafile need --etcd-endpoints/);
    assert.throws(() => normalizeDoctorOptions({ etcdEndpoints: 'http://a:1', etcdCertfile: '/c.pem' }), /--etcd-certfile and --etcd-keyfile go together/);
    assert.throws(() => normalizeDoctorOptions({ etcdEndpoints: 'http://a:1', etcdPassword: 'pw' }), /--etcd-password needs --etcd-username/);
    assert.throws(() => normalizeDoctorOptions({ etcdEndpoints: 'http://a:1', etcdPrefix: 'x' }), /--etcd-prefix "x" must start with/);
    assert.throws(() => normalizeDoctorOptions({ subnetFile: 'rel' }), /--subnet-file "rel" must be an absolute path/);
    assert.throws(() => normalizeDoctorOptions({ metricsAddr: 'nope' }), /--metrics-addr "nope"/);
  });
});

describe('report', () => {
  const report = buildReport([
    { check: 'lease', problems: [], facts: { subnet: '10.244.1.0/24' } },
    { check: 'weftd', problems: [], facts: {}, skipped: 'no --metrics-addr' },
    { check: 'mtu', problems: [{ check: 'mtu', detail: 'cni0 has MTU 1500', fix: 'ip link set dev cni0 mtu 1450' }], facts: {} },
  ]);
  test('json carries ok, problems {check, detail, fix} and each check', () => {
    const j = JSON.parse(formatReportJson(report)) as typeof report;
    assert.equal(j.ok, false);
    assert.deepEqual(j.problems, [{ check: 'mtu', detail: 'cni0 has MTU 1500', fix: 'ip link set dev cni0 mtu 1450' }]);
    assert.deepEqual(j.checks.map((c) => c.status), ['ok', 'skipped', 'problem']);
  });
  test('the table lists each check, then each problem with its fix', () => {
    const t = formatReportTable(report);
    assert.match(t, /^lease\s+ok\s+subnet=10\.244\.1\.0\/24$/m);
    assert.match(t, /^weftd\s+skipped\s+no --metrics-addr$/m);
    assert.match(t, /^1\. \[mtu\] cni0 has MTU 1500\n {3}fix: ip link set dev cni0 mtu 1450$/m);
    assert.match(t, /1 problem found\n$/);
    assert.match(formatReportTable(buildReport([{ check: 'lease', problems: [], facts: {} }])), /node is healthy\n$/);
  });
});

describe('etcd gateway', () => {
  test('a prefix range ends one past the last byte (etcd\'s prefix convention)', async () => {
    const { prefixRangeEnd } = await import('../../../../agent/lease/etcd/gateway.ts');
    assert.equal(prefixRangeEnd('/coreos.com/network/subnets/'), '/coreos.com/network/subnets0');
  });
});
