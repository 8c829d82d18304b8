// The kube cluster kit's pure parts (no root): the files a node is given, the kubeconfig, quantiles,
// the reachability matrix's text, the Deployment and pods the tests and demo schedule, ping logs.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { formatCertKubeconfig } from '../../../testkit/kube-cluster/certs.ts';
import { quantile } from '../../../testkit/kube-cluster/latency.ts';
import { parsePingLog } from '../../../testkit/kube-cluster/pinger.ts';
import { httpdPod } from '../../../testkit/kube-cluster/pod-features.ts';
import { containerdConfig, FAKE_SYSCTLS, holderScript, kubeletConfig } from '../../../testkit/kube-cluster/node-files.ts';
import { formatReachability, httpdDeployment, type PodView } from '../../../testkit/kube-cluster/workload.ts';

void describe('kube-cluster node files', () => {
  void it('the KubeletConfiguration parses as YAML with the cgroup v1, no-systemd settings', () => {
    const c = parse(kubeletConfig({ cgroupRoot: '/weft-kube-1-n1', address: '192.0.2.11', clientCa: '/x/ca.crt' })) as Record<string, unknown>;
    assert.equal(c.kind, 'KubeletConfiguration');
    assert.equal(c.cgroupDriver, 'cgroupfs');
    assert.equal(c.cgroupRoot, '/weft-kube-1-n1');
    assert.equal(c.failSwapOn, false);
    assert.equal(c.address, '192.0.2.11');
    assert.deepEqual((c.authentication as { x509: unknown }).x509, { clientCAFile: '/x/ca.crt' });
  });

  void it('the holder binds every private dir and each fake sysctl, and exits on the first failure', () => {
    const s = holderScript("/tmp/it's");
    assert.match(s, /^set -e\n/);
    assert.ok(s.includes(`R='/tmp/it'"'"'s'`), 'the root is quoted');
    for (const d of ['/run', '/var/lib', '/var/log', '/etc/cni/net.d', '/opt/cni/bin']) assert.ok(s.includes(` ${d}\n`), d);
    for (const f of Object.keys(FAKE_SYSCTLS)) assert.ok(s.includes(`/proc/sys/${f}`), f);
    assert.match(s, /exec sleep \d+$/);
  });

  void it('containerd\'s config names the local sandbox image and the CNI dirs, max one conflist', () => {
    const c = containerdConfig('weft.test/busybox:1');
    assert.match(c, /sandbox_image = "weft\.test\/busybox:1"/);
    assert.match(c, /bin_dir = "\/opt\/cni\/bin"/);
    assert.match(c, /conf_dir = "\/etc\/cni\/net\.d"/);
    assert.match(c, /max_conf_num = 1/);
  });

  void it('a client-certificate kubeconfig', () => {
    const k = parse(formatCertKubeconfig('https://192.0.2.3:6443', '/ca.crt', { cert: '/a.crt', key: '/a.key' })) as {
      clusters: Array<{ cluster: Record<string, string> }>; users: Array<{ user: Record<string, string> }>; 'current-context': string;
    };
    assert.equal(k.clusters[0]?.cluster.server, 'https://192.0.2.3:6443');
    assert.equal(k.clusters[0]?.cluster['certificate-authority'], '/ca.crt');
    assert.deepEqual(k.users[0]?.user, { 'client-certificate': '/a.crt', 'client-key': '/a.key' });
    assert.equal(k['current-context'], 'test');
  });
});

void describe('kube-cluster measurements and workloads', () => {
  void it('quantile: nearest rank', () => {
    const v = Array.from({ length: 30 }, (_, i) => i + 1);
    assert.equal(quantile(v, 0.5), 15);
    assert.equal(quantile(v, 0.99), 30);
    assert.equal(quantile([7], 0.99), 7);
    assert.ok(Number.isNaN(quantile([], 0.5)));
  });

  void it('the reachability matrix marks each target', () => {
    const pods = [{ ip: '10.244.0.2' }, { ip: '10.244.1.2' }] as PodView[];
    const text = formatReachability([{ from: 'a', ok: ['10.244.0.2'], failed: ['10.244.1.2'] }, { from: 'node n1', ok: ['10.244.0.2', '10.244.1.2'], failed: [] }], pods);
    assert.deepEqual(text.split('\n'), ['          p1 p2', 'a          o  x', 'node n1    o  o']);
  });

  void it('the Deployment: never pulled, spread by hostname, HTTP probes on the served page', () => {
    const d = httpdDeployment('web', 'ns', 6, 'img:1') as { spec: { replicas: number; template: { spec: {
      topologySpreadConstraints: Array<{ topologyKey: string; maxSkew: number }>; containers: Array<{ imagePullPolicy: string; readinessProbe: { httpGet: { path: string } }; livenessProbe: unknown }> } } } };
    assert.equal(d.spec.replicas, 6);
    assert.equal(d.spec.template.spec.topologySpreadConstraints[0]?.topologyKey, 'kubernetes.io/hostname');
    const c = d.spec.template.spec.containers[0];
    assert.equal(c?.imagePullPolicy, 'Never');
    assert.equal(c?.readinessProbe.httpGet.path, '/index.html');
    assert.ok(c?.livenessProbe);
  });
});

void describe('kube-cluster pings and pod features', () => {
  const line = (seq: number): string => `64 bytes from 10.244.1.3: seq=${seq} ttl=62 time=0.123 ms`;

  void it('parsePingLog: no loss is a gap of one interval; a hole of 3 is a gap of 4 intervals', () => {
    const full = [...[0, 1, 2, 3].map(line), '--- 10.244.1.3 ping statistics ---', '4 packets transmitted, 4 packets received, 0% packet loss'].join('\n');
    assert.deepEqual(parsePingLog(full, 200), { sent: 4, received: 4, longestGapMs: 200 });
    const holed = [...[0, 1, 5, 6].map(line), '7 packets transmitted, 4 packets received, 42% packet loss'].join('\n');
    assert.deepEqual(parsePingLog(holed, 200), { sent: 7, received: 4, longestGapMs: 800 });
  });

  void it('parsePingLog: fewer than two replies has no gap to measure (Infinity), and a duplicate counts once', () => {
    assert.equal(parsePingLog('PING 10.244.1.3\n3 packets transmitted, 0 packets received', 200).longestGapMs, Infinity);
    assert.deepEqual(parsePingLog([line(0), line(1), line(1)].join('\n'), 200), { sent: 2, received: 2, longestGapMs: 200 });
  });

  void it('httpdPod: pinned by the hostname label, with a hostPort and annotations when asked', () => {
    const p = httpdPod('hp', 'ns', 'img', 'n1', { hostPort: 8080, annotations: { 'kubernetes.io/ingress-bandwidth': '1M' } }) as {
      metadata: { annotations?: Record<string, string> }; spec: { nodeSelector: Record<string, string>; containers: Array<{ ports: Array<{ hostPort?: number }> }> } };
    assert.deepEqual(p.spec.nodeSelector, { 'kubernetes.io/hostname': 'n1' });
    assert.equal(p.spec.containers[0]?.ports[0]?.hostPort, 8080);
    assert.deepEqual(p.metadata.annotations, { 'kubernetes.io/ingress-bandwidth': '1M' });
    const plain = httpdPod('p', 'ns', 'img', 'n1') as { metadata: Record<string, unknown>; spec: { containers: Array<{ ports: Array<Record<string, unknown>> }> } };
    assert.equal('annotations' in plain.metadata, false);
    assert.deepEqual(plain.spec.containers[0]?.ports[0], { containerPort: 80 });
  });
});
