// The bridge's masquerade chain with weftMasqExempt, in a namespace this test creates: the exempt
// networks land in a per-network interval set that the one rule per family matches, a second ADD is
// the in-process steady state, and a chain from a build without the exempt sets is rewritten.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { withNetns } from '../../../../lib/netns/index.ts';
import { setupMasq, teardownMasq, type MasqSpec } from '../../../../plugins/bridge/masquerade.ts';
import { masqNames } from '../../../../plugins/bridge/names.ts';
import { NsFixture, type TestNs } from '../../lib/netlink/ns-fixture.ts';

const fx = new NsFixture();
let ns: TestNs;
before(() => { ns = fx.create(); });
after(() => fx.cleanup());

const spec = (network: string, id: string, ip: string, exempt?: string[]): MasqSpec =>
  ({ network, containerId: id, ifName: 'eth0', podCidrs: [`${ip}/24`], ...(exempt === undefined ? {} : { exempt }) });
const inNs = (fn: () => void): void => withNetns(ns.handle, fn);
const nft = (...args: string[]): string => ns.exec('nft', ...args);

test('exempt networks go to the network\'s exempt set, matched by its one rule; a second ADD adds only the pod', () => {
  const n = masqNames('exnet');
  inNs(() => setupMasq(spec('exnet', 'c1', '10.244.3.2', ['10.244.0.0/16', 'fd00:42::/56'])));
  inNs(() => setupMasq(spec('exnet', 'c2', '10.244.3.3', ['10.244.0.0/16', 'fd00:42::/56'])));
  const chain = nft('list', 'chain', 'inet', 'weft', n.chain);
  assert.match(chain, new RegExp(`ip daddr != @${n.nets4} ip daddr != @${n.exempt4} ip daddr != 224\\.0\\.0\\.0/4 masquerade`));
  assert.match(chain, new RegExp(`ip6 daddr != @${n.nets6} ip6 daddr != @${n.exempt6} ip6 daddr != ff00::/8 masquerade`));
  assert.equal((chain.match(/masquerade/g) ?? []).length, 2, 'one rule per family, whatever the pod count');
  assert.match(nft('list', 'set', 'inet', 'weft', n.exempt4), /elements = \{ 10\.244\.0\.0\/16 \}/);
  assert.match(nft('list', 'set', 'inet', 'weft', n.exempt6), /elements = \{ fd00:42::\/56 \}/);
  assert.match(nft('list', 'set', 'inet', 'weft', n.pods4), /10\.244\.3\.2.*10\.244\.3\.3|10\.244\.3\.3.*10\.244\.3\.2/s);
  inNs(() => teardownMasq(spec('exnet', 'c1', '10.244.3.2')));
  assert.doesNotMatch(nft('list', 'set', 'inet', 'weft', n.pods4), /10\.244\.3\.2\b/);
  assert.match(nft('list', 'set', 'inet', 'weft', n.exempt4), /10\.244\.0\.0\/16/, 'exempt networks stay for the next pod');
});

test('a chain without the exempt sets (an older build) is rewritten by the first ADD that carries the key', () => {
  const n = masqNames('oldnet');
  const old = [
    'table inet weft {',
    `  set ${n.pods4} { type ipv4_addr; elements = { 10.9.1.2 } }`,
    `  set ${n.pods6} { type ipv6_addr; }`,
    `  set ${n.nets4} { type ipv4_addr; flags interval; elements = { 10.9.1.0/24 } }`,
    `  set ${n.nets6} { type ipv6_addr; flags interval; }`,
    `  chain ${n.chain} { type nat hook postrouting priority srcnat; policy accept;`,
    `    ip saddr @${n.pods4} ip daddr != @${n.nets4} ip daddr != 224.0.0.0/4 masquerade`,
    `    ip6 saddr @${n.pods6} ip6 daddr != @${n.nets6} ip6 daddr != ff00::/8 masquerade`,
    '  }',
    '}',
  ].join('\n');
  ns.exec('sh', '-c', `printf '%s\\n' "$0" | nft -f -`, old);
  inNs(() => setupMasq(spec('oldnet', 'c3', '10.9.1.3', ['10.9.0.0/16'])));
  const chain = nft('list', 'chain', 'inet', 'weft', n.chain);
  assert.match(chain, new RegExp(`ip daddr != @${n.exempt4} `));
  assert.equal((chain.match(/masquerade/g) ?? []).length, 2);
  assert.match(nft('list', 'set', 'inet', 'weft', n.exempt4), /10\.9\.0\.0\/16/);
  assert.match(nft('list', 'set', 'inet', 'weft', n.pods4), /10\.9\.1\.2.*10\.9\.1\.3|10\.9\.1\.3.*10\.9\.1\.2/s, 'existing pods kept');
});
