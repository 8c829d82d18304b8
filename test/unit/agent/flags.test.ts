import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeWeftdFlags, weftdCommand, type RawFlags } from '../../../agent/flags.ts';

function parse(argv: string[]): RawFlags {
  const c = weftdCommand('0.0.0').exitOverride();
  c.parse(['node', 'weftd', ...argv]);
  return c.opts<RawFlags>();
}

void describe('weftd flags', () => {
  it('defaults: file store, flannel paths, 1 s resync', () => {
    const o = normalizeWeftdFlags(parse(['--net-conf', '/etc/weft/net-conf.json']));
    assert.equal(o.subnetFile, '/run/flannel/subnet.env');
    assert.equal(o.resyncMs, 1000);
    assert.equal(o.ipMasq, false);
    assert.deepEqual(o.store, { netConfPath: '/etc/weft/net-conf.json' });
  });

  it('etcd flags pass through; contradictions and bad values name the flag', () => {
    const o = normalizeWeftdFlags(parse(['--etcd-endpoints', 'http://a:2379,http://b:2379', '--etcd-prefix', '/x', '--ip-masq', '--metrics-addr', ':9101', '--lease-ttl', '60']));
    assert.deepEqual(o.store, { etcdEndpoints: 'http://a:2379,http://b:2379', etcdPrefix: '/x', ttlSeconds: 60 });
    assert.equal(o.ipMasq, true);
    assert.throws(() => normalizeWeftdFlags(parse(['--store', 'file:/x', '--etcd-endpoints', 'http://a'])), /mutually exclusive/);
    assert.throws(() => normalizeWeftdFlags(parse(['--resync-interval', '5'])), /--resync-interval "5"/);
    assert.throws(() => normalizeWeftdFlags(parse(['--subnet-file', 'rel/subnet.env'])), /--subnet-file/);
    assert.throws(() => normalizeWeftdFlags(parse(['--metrics-addr', 'nope'])), /--metrics-addr/);
  });

  it('etcd TLS and auth flags keep flanneld\'s names and pass through; half-given ones are refused', () => {
    const o = normalizeWeftdFlags(parse(['--etcd-endpoints', 'https://a:2379', '--etcd-cafile', '/ca', '--etcd-certfile', '/c', '--etcd-keyfile', '/k', '--etcd-username', 'u', '--etcd-password', 'p']));
    assert.deepEqual(o.store, { etcdEndpoints: 'https://a:2379', etcdSecurity: { cafile: '/ca', certfile: '/c', keyfile: '/k', username: 'u', password: 'p' } });
    assert.throws(() => normalizeWeftdFlags(parse(['--etcd-cafile', '/ca'])), /--etcd-cafile need --etcd-endpoints/);
    assert.throws(() => normalizeWeftdFlags(parse(['--etcd-endpoints', 'https://a', '--etcd-certfile', '/c'])), /--etcd-certfile and --etcd-keyfile go together/);
    assert.throws(() => normalizeWeftdFlags(parse(['--etcd-endpoints', 'https://a', '--etcd-password', 'p'])), /--etcd-password needs --etcd-username/);
  });
});
