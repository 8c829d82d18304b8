// weftd's --kube-subnet-mgr flags: NODE_NAME, prefix check, exclusivity, flanneld's --net-config-path.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeWeftdFlags, weftdCommand, type RawFlags } from '../../../agent/flags.ts';

const parse = (args: string[]): RawFlags => weftdCommand('0').parse(['node', 'weftd', ...args]).opts<RawFlags>();

void describe('weftd --kube-subnet-mgr flags', () => {
  void it('without NODE_NAME takes POD_NAMESPACE/POD_NAME to look the node up (flanneld\'s fallback); NODE_NAME wins', () => {
    const o = normalizeWeftdFlags(parse(['--kube-subnet-mgr', '--net-config-path', '/n']), { POD_NAME: 'weft-abcde', POD_NAMESPACE: 'kube-flannel' });
    assert.deepEqual([o.store.nodeName, o.store.podName, o.store.podNamespace], [undefined, 'weft-abcde', 'kube-flannel']);
    assert.throws(() => normalizeWeftdFlags(parse(['--kube-subnet-mgr']), { POD_NAME: 'weft-abcde' }), /POD_NAME and POD_NAMESPACE/);
    assert.equal(normalizeWeftdFlags(parse(['--kube-subnet-mgr', '--net-config-path', '/n']), { NODE_NAME: 'n1', POD_NAME: 'p', POD_NAMESPACE: 'ns' }).store.nodeName, 'n1');
  });
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
