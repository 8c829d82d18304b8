// weftd's --kube-subnet-mgr flags: NODE_NAME, prefix check, exclusivity, flanneld's --net-config-path.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeWeftdFlags, weftdCommand, type RawFlags } from '../../../../agent/flags.ts';

const parse = (args: string[]): RawFlags => weftdCommand('0').parse(['node', 'weftd', ...args]).opts<RawFlags>();

void describe('weftd --kube-subnet-mgr flags', () => {
  void it('selects the kube store with the node name from NODE_NAME', () => {
    const o = normalizeWeftdFlags(parse(['--kube-subnet-mgr', '--net-config-path', '/etc/kube-flannel/net-conf.json', '--kube-api-url', 'https://192.0.2.1:6443']), { NODE_NAME: 'n1' });
    assert.equal(o.store.kubeSubnetMgr, true);
    assert.equal(o.store.nodeName, 'n1');
    assert.equal(o.store.netConfPath, '/etc/kube-flannel/net-conf.json');
    assert.equal(o.store.kubeApiUrl, 'https://192.0.2.1:6443');
  });
  void it('refuses what flanneld would not run with', () => {
    assert.throws(() => normalizeWeftdFlags(parse(['--kube-subnet-mgr']), {}), /NODE_NAME/);
    assert.throws(() => normalizeWeftdFlags(parse(['--kube-subnet-mgr', '--etcd-endpoints', 'http://a:2379']), { NODE_NAME: 'n' }), /mutually exclusive/);
    assert.throws(() => normalizeWeftdFlags(parse(['--kube-subnet-mgr', '--kube-annotation-prefix', 'Not A Prefix']), { NODE_NAME: 'n' }), /--kube-annotation-prefix/);
    assert.throws(() => normalizeWeftdFlags(parse(['--net-conf', '/a', '--net-config-path', '/b']), {}), /give one/);
  });
  void it('accepts a custom annotation prefix', () => {
    const o = normalizeWeftdFlags(parse(['--kube-subnet-mgr', '--kube-annotation-prefix', 'weft.example.com']), { NODE_NAME: 'n' });
    assert.equal(o.store.kubeAnnotationPrefix, 'weft.example.com');
  });
});
