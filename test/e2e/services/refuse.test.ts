// weftd --service-proxy refuses to start where kube-proxy's rules are (and writes nothing first);
// kubeProxyTraces sees kube-proxy's nftables table and its iptables(-nft) KUBE-SERVICES chain.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubeProxyTraces } from '../../../agent/services/kube-proxy-present.ts';
import { createTestNetns, rootOnly, run } from '../../../testkit/netns.ts';

const WEFTD = join(import.meta.dirname, '..', '..', '..', 'dist', 'bin', 'weftd');

void describe('--service-proxy beside kube-proxy', rootOnly(), () => {
  it('finds table ip kube-proxy and KUBE-SERVICES in ip nat; nothing on a clean node', async () => {
    const ns = await createTestNetns('wsvcr');
    try {
      assert.deepEqual(kubeProxyTraces({ netnsPath: ns.path }), []);
      await run(['ip', 'netns', 'exec', ns.name, 'nft', 'add table ip nat; add chain ip nat KUBE-SERVICES; add table ip kube-proxy']);
      assert.deepEqual(kubeProxyTraces({ netnsPath: ns.path }), ['table ip kube-proxy', 'chain KUBE-SERVICES in table ip nat']);
    } finally {
      await ns.destroy();
    }
  });

  it('weftd exits with a clear message and leaves no table of its own', { skip: existsSync(WEFTD) ? false : 'npm run build first' }, async () => {
    const ns = await createTestNetns('wsvcr');
    const dir = mkdtempSync(join(tmpdir(), 'wsvcr-'));
    try {
      writeFileSync(join(dir, 'net-conf.json'), JSON.stringify({ Network: '10.244.0.0/16', Backend: { Type: 'host-gw' } }));
      await run(['ip', 'netns', 'exec', ns.name, 'nft', 'add table ip nat; add chain ip nat KUBE-SERVICES']);
      const r = await run(['ip', 'netns', 'exec', ns.name, 'env', 'NODE_NAME=n1', WEFTD, '--service-proxy', '--net-conf', join(dir, 'net-conf.json'),
        '--store', `file:${join(dir, 'leases')}`, '--subnet-file', join(dir, 'subnet.env')], { timeoutMs: 20_000 });
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /kube-proxy's rules are on this node \(chain KUBE-SERVICES in table ip nat\)/);
      const tables = (await run(['ip', 'netns', 'exec', ns.name, 'nft', 'list', 'tables'])).stdout;
      assert.doesNotMatch(tables, /weft/);
      assert.equal(existsSync(join(dir, 'subnet.env')), false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await ns.destroy();
    }
  });
});
