// Chain and rule listings over nf_tables netlink against the kernel, in a namespace created by the
// test: base chains made by nft and by iptables-nft are listed with hook, priority and policy, and
// rule comments (nft's and iptables-nft's `-m comment`) are read back.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { NfnlSocket, listBaseChains, listRuleComments } from '../../../../lib/netfilter/nfnl/index.ts';
import { openNetns, withNetns } from '../../../../lib/netns/index.ts';
import { createTestNetns, rootOnly, run, type TestNetns, inNetns } from '../../../../testkit/netns.ts';

const SCRIPT = `
add table inet hostfw
add chain inet hostfw forward { type filter hook forward priority -5; policy drop; }
add chain inet hostfw regular
add rule inet hostfw forward ct state established accept comment "first rule"
add rule inet hostfw forward counter
add table ip natty
add chain ip natty post { type nat hook postrouting priority srcnat; policy accept; }
`;

describe('nf_tables chains and rules over netlink', rootOnly(), () => {
  let ns: TestNetns;
  let sock: NfnlSocket;

  before(async () => {
    ns = await createTestNetns('weft-t-nfch');
    const r = await run(inNetns(ns.name, ['nft', '-f', '-']), SCRIPT);
    assert.equal(r.code, 0, r.stderr);
    const ipt = await run(inNetns(ns.name, ['iptables', '-A', 'FORWARD', '-m', 'comment', '--comment', 'from-iptables', '-j', 'ACCEPT']));
    assert.equal(ipt.code, 0, ipt.stderr);
    assert.equal((await run(inNetns(ns.name, ['iptables', '-P', 'FORWARD', 'DROP']))).code, 0);
    const h = openNetns(ns.path);
    try {
      sock = withNetns(h, () => NfnlSocket.open());
    } finally {
      h.close();
    }
  });
  after(async () => {
    sock?.close();
    await ns.destroy();
  });

  it('lists every base chain with family, hook, priority, type and policy; regular chains are left out', () => {
    const chains = listBaseChains(sock).map((c) => `${c.family} ${c.table} ${c.name} ${c.type} ${c.hook} ${c.priority} ${c.policy}`).sort();
    assert.deepEqual(chains, [
      'inet hostfw forward filter forward -5 drop',
      // iptables-nft 1.8.9 creates only the built-in chains it is asked about.
      'ip filter FORWARD filter forward 0 drop',
      'ip natty post nat postrouting 100 accept',
    ]);
  });

  it('reads nft rule comments (user data) in order; iptables-nft keeps `-m comment` in an xt match, not user data', async () => {
    assert.deepEqual(listRuleComments(sock, 'inet', 'hostfw', 'forward').map((r) => r.comment), ['first rule', undefined]);
    assert.deepEqual(listRuleComments(sock, 'ip', 'filter', 'FORWARD').map((r) => r.comment), [undefined]);
    // A rule nft inserts into iptables-nft's chain carries user data that both tools show.
    const ins = await run(inNetns(ns.name, ['nft', 'insert rule ip filter FORWARD meta mark & 0x00100000 == 0x00100000 counter accept comment "weft-firewall"']));
    assert.equal(ins.code, 0, ins.stderr);
    assert.deepEqual(listRuleComments(sock, 'ip', 'filter', 'FORWARD').map((r) => r.comment), ['weft-firewall', undefined]);
    const ipt = await run(inNetns(ns.name, ['iptables', '-S', 'FORWARD']));
    assert.match(ipt.stdout, /-A FORWARD -m mark --mark 0x100000\/0x100000 -m comment --comment weft-firewall -j ACCEPT/);
  });

  it('a missing table or chain lists no rules', () => {
    assert.deepEqual(listRuleComments(sock, 'ip', 'nosuch', 'FORWARD'), []);
    assert.deepEqual(listRuleComments(sock, 'inet', 'hostfw', 'nosuch'), []);
  });
});
