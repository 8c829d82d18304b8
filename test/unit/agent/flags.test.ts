import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeWeftdFlags, weftdCommand, type RawFlags } from '../../../agent/flags.ts';
import { flanneldArgv } from '../../../agent/flanneld-argv.ts';

function parse(argv: string[], env: Record<string, string> = {}): RawFlags {
  const c = weftdCommand('0.0.0').exitOverride();
  c.parse(flanneldArgv(argv, env), { from: 'user' });
  return c.opts<RawFlags>();
}

void describe('weftd flags', () => {
  it('defaults: file store, flannel paths, 1 s resync', () => {
    const o = normalizeWeftdFlags(parse(['--net-conf', '/etc/weft/net-conf.json']));
    assert.equal(o.subnetFile, '/run/flannel/subnet.env');
    assert.equal(o.resyncMs, 1000);
    assert.equal(o.ipMasq, false);
    assert.deepEqual(o.store, { netConfPath: '/etc/weft/net-conf.json', renewMarginMs: 3600_000 });
    assert.deepEqual(o.uplink, {});
    assert.equal(o.metricsAddr, undefined);
  });

  it('etcd flags pass through; contradictions and bad values name the flag', () => {
    const o = normalizeWeftdFlags(parse(['--etcd-endpoints', 'http://a:2379,http://b:2379', '--etcd-prefix', '/x', '--ip-masq', '--metrics-addr', ':9101', '--lease-ttl', '60']));
    assert.deepEqual(o.store, { etcdEndpoints: 'http://a:2379,http://b:2379', etcdPrefix: '/x', renewMarginMs: 3600_000, ttlSeconds: 60 });
    assert.equal(o.ipMasq, true);
    assert.throws(() => normalizeWeftdFlags(parse(['--store', 'file:/x', '--etcd-endpoints', 'http://a'])), /mutually exclusive/);
    assert.throws(() => normalizeWeftdFlags(parse(['--resync-interval', '5'])), /--resync-interval "5"/);
    assert.throws(() => normalizeWeftdFlags(parse(['--subnet-file', 'rel/subnet.env'])), /--subnet-file/);
    assert.throws(() => normalizeWeftdFlags(parse(['--metrics-addr', 'nope'])), /--metrics-addr/);
  });

  it("a flanneld unit's command line (Go syntax) means what it means to flanneld", () => {
    const o = normalizeWeftdFlags(parse([
      '-etcd-endpoints=https://10.0.0.1:2379', '-etcd-prefix', '/coreos.com/network', '-etcd-cafile=/pki/ca.pem',
      '-etcd-certfile=/pki/c.pem', '-etcd-keyfile=/pki/c-key.pem', '--etcd-username=flannel', '--etcd-password=s3cret',
      '-iface=eth1', '--iface', '10.0.0.5', '-iface-regex=^ens', '--iface-can-reach=10.0.0.1', '-public-ip=10.0.0.5',
      '-subnet-file=/run/flannel/subnet.env', '-ip-masq=true', '-subnet-lease-renew-margin=30',
      '--healthz-ip=127.0.0.1', '--healthz-port=8081', '-v=2', '--kube-subnet-mgr=false', '-iptables-resync=5',
    ]));
    assert.deepEqual(o.store, {
      etcdEndpoints: 'https://10.0.0.1:2379', etcdPrefix: '/coreos.com/network', renewMarginMs: 30 * 60_000,
      etcdSecurity: { cafile: '/pki/ca.pem', certfile: '/pki/c.pem', keyfile: '/pki/c-key.pem', username: 'flannel', password: 's3cret' },
    });
    assert.deepEqual(o.uplink, { iface: ['eth1', '10.0.0.5'], ifaceRegex: [/^ens/], ifaceCanReach: '10.0.0.1', publicIp: '10.0.0.5' });
    assert.equal(o.ipMasq, true);
    assert.equal(o.metricsAddr, '127.0.0.1:8081');
    assert.equal(normalizeWeftdFlags(parse(['--net-conf', '/n', '-ip-masq=false'])).ipMasq, false);
  });

  it('FLANNELD_* variables fill what the command line lacks; the command line wins', () => {
    const env = { FLANNELD_ETCD_ENDPOINTS: 'http://e:2379', FLANNELD_ETCD_PREFIX: '/env', FLANNELD_IP_MASQ: 'true', FLANNELD_IFACE: 'eth7', FLANNELD_SUBNET_FILE: '' };
    const o = normalizeWeftdFlags(parse(['--etcd-prefix', '/cli'], env));
    assert.deepEqual([o.store.etcdEndpoints, o.store.etcdPrefix, o.ipMasq, o.uplink.iface, o.subnetFile], ['http://e:2379', '/cli', true, ['eth7'], '/run/flannel/subnet.env']);
    assert.equal(normalizeWeftdFlags(parse(['--net-conf', '/n'], { FLANNELD_HEALTHZ_PORT: '9000' })).metricsAddr, '0.0.0.0:9000');
    assert.equal(normalizeWeftdFlags(parse(['--net-conf', '/n'], { FLANNELD_KUBE_SUBNET_MGR: 'true' }), { NODE_NAME: 'n1' }).store.kubeSubnetMgr, true);
    assert.throws(() => parse([], { FLANNELD_IP_MASQ: 'yes' }), /--ip-masq "yes" is not a boolean/);
  });

  it('flanneld flags weftd cannot honour are refused unless they hold flanneld\'s default', () => {
    assert.throws(() => parse(['--set-node-network-unavailable=false']), /--set-node-network-unavailable=false: flanneld flag not supported/);
    assert.throws(() => parse(['-iptables-resync=10']), /--iptables-resync=10: flanneld flag not supported by weftd \(weftd uses nftables/);
    assert.throws(() => parse(['--etcd-endpoints']), /--etcd-endpoints needs a value/);
    assert.doesNotThrow(() => parse(['--iptables-forward-rules', '--set-node-network-unavailable=true', '--kube-annotation-prefix=flannel.alpha.coreos.com']));
  });

  it('--iptables-forward-rules: on by default as in flanneld; false (Go syntax, weftd\'s --no- form, FLANNELD_*) turns it off', () => {
    const on = (argv: string[], env: Record<string, string> = {}) => normalizeWeftdFlags(parse(['--net-conf', '/n', ...argv], env)).forwardRules;
    assert.equal(on([]), true);
    assert.equal(on(['--iptables-forward-rules']), true);
    assert.equal(on(['-iptables-forward-rules=true']), true);
    assert.equal(on(['--iptables-forward-rules=false']), false);
    assert.equal(on(['-iptables-forward-rules=0']), false);
    assert.equal(on(['--no-iptables-forward-rules']), false);
    assert.equal(on([], { FLANNELD_IPTABLES_FORWARD_RULES: 'false' }), false);
    assert.equal(on(['--iptables-forward-rules=true'], { FLANNELD_IPTABLES_FORWARD_RULES: 'false' }), true);
    assert.throws(() => parse(['--iptables-forward-rules=maybe']), /not a boolean/);
  });

  it('--public-ipv6 and FLANNELD_PUBLIC_IPV6: an IPv6 address in Go\'s text form; empty means auto-detect', () => {
    assert.equal(normalizeWeftdFlags(parse(['--net-conf', '/n', '--public-ipv6', 'FD00:0::1'])).publicIpv6, 'fd00::1');
    assert.equal(normalizeWeftdFlags(parse(['--net-conf', '/n'], { FLANNELD_PUBLIC_IPV6: 'fd00:1::5' })).publicIpv6, 'fd00:1::5');
    assert.equal(normalizeWeftdFlags(parse(['--net-conf', '/n', '--public-ipv6', 'fd00::2'], { FLANNELD_PUBLIC_IPV6: 'fd00:1::5' })).publicIpv6, 'fd00::2');
    assert.equal(normalizeWeftdFlags(parse(['--net-conf', '/n', '--public-ipv6='])).publicIpv6, undefined);
    assert.equal(normalizeWeftdFlags(parse(['--net-conf', '/n'])).publicIpv6, undefined);
    assert.throws(() => normalizeWeftdFlags(parse(['--net-conf', '/n', '--public-ipv6', '10.0.0.1'])), /--public-ipv6 "10.0.0.1" is not an IPv6 address/);
    assert.throws(() => normalizeWeftdFlags(parse(['--net-conf', '/n', '--public-ipv6', '::ffff:10.0.0.1'])), /not an IPv6 address/);
  });

  it('pairs and ranges of the flanneld flags are checked', () => {
    const ok = ['--etcd-endpoints', 'https://a:2379'];
    assert.throws(() => normalizeWeftdFlags(parse([...ok, '--etcd-certfile', '/c'])), /--etcd-certfile and --etcd-keyfile go together/);
    assert.throws(() => normalizeWeftdFlags(parse([...ok, '--etcd-password', 'p'])), /--etcd-password needs --etcd-username/);
    assert.throws(() => normalizeWeftdFlags(parse([...ok, '--subnet-lease-renew-margin', '1440'])), /--subnet-lease-renew-margin "1440" must be an integer from 1 to 1439/);
    assert.throws(() => normalizeWeftdFlags(parse([...ok, '--healthz-port', '8081', '--metrics-addr', ':1'])), /give one/);
    assert.throws(() => normalizeWeftdFlags(parse([...ok, '--iface-regex', '('])), /--iface-regex "\(" is not a valid regular expression/);
    assert.throws(() => normalizeWeftdFlags(parse(['--net-conf', '/a', '--net-config-path', '/b'])), /same flag/);
    assert.equal(normalizeWeftdFlags(parse(['--net-config-path', '/b'])).store.netConfPath, '/b');
    // flanneld reaches etcd at its default endpoints when only other --etcd-* flags are given.
    assert.equal(normalizeWeftdFlags(parse(['--etcd-prefix', '/p'])).store.etcdEndpoints, 'http://127.0.0.1:4001,http://127.0.0.1:2379');
    assert.throws(() => normalizeWeftdFlags(parse(['-v=x', '--net-conf', '/n'])), /--v "x" must be a non-negative integer/);
  });

  it('etcd TLS and auth flags keep flanneld\'s names and pass through; half-given ones are refused', () => {
    const o = normalizeWeftdFlags(parse(['--etcd-endpoints', 'https://a:2379', '--etcd-cafile', '/ca', '--etcd-certfile', '/c', '--etcd-keyfile', '/k', '--etcd-username', 'u', '--etcd-password', 'p']));
    assert.deepEqual(o.store, { etcdEndpoints: 'https://a:2379', renewMarginMs: 3600_000, etcdSecurity: { cafile: '/ca', certfile: '/c', keyfile: '/k', username: 'u', password: 'p' } });
    // Without --etcd-endpoints, flanneld's default endpoints (flanneld always uses etcd).
    assert.equal(normalizeWeftdFlags(parse(['--etcd-cafile', '/ca'])).store.etcdEndpoints, 'http://127.0.0.1:4001,http://127.0.0.1:2379');
    assert.throws(() => normalizeWeftdFlags(parse(['--etcd-endpoints', 'https://a', '--etcd-certfile', '/c'])), /--etcd-certfile and --etcd-keyfile go together/);
    assert.throws(() => normalizeWeftdFlags(parse(['--etcd-endpoints', 'https://a', '--etcd-password', 'p'])), /--etcd-password needs --etcd-username/);
  });
});
