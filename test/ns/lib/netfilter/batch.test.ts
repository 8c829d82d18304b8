// NftBatch against the kernel, in namespaces created by the test (nft runs there via nsenter).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { NftBatch, NftError, deleteTable, findElementsByComment, listSet, listTable, nftExpr } from '../../../../lib/netfilter/index.ts';
import type { NftRunOptions } from '../../../../lib/netfilter/index.ts';
import { createTestNetns, rootOnly, type TestNetns } from '../../../../testkit/netns.ts';

const T = { family: 'inet', name: 'weft' } as const;
const MASQ_CHAIN = 'masq-post';
const SET = 'pods-cbr0';
const MASQ_TAG = 'weft-masq cbr0';

/** The batch the bridge plugin would send on each ADD: ensure everything, then add this pod. */
function podAdd(ip: string, containerId: string): NftBatch {
  return new NftBatch(T)
    .ensureTable()
    .ensureChain(MASQ_CHAIN, { type: 'nat', hook: 'postrouting', priority: 'srcnat', policy: 'accept' })
    .ensureSet(SET, { type: 'ipv4_addr', comment: 'network cbr0' })
    .ensureRule(MASQ_CHAIN, nftExpr`ip saddr @${SET} ip daddr != ${['10.244.0.0/16', '224.0.0.0/4']} masquerade`, MASQ_TAG)
    .addElement(SET, ip, { comment: containerId });
}

describe('NftBatch in a test namespace', rootOnly(), () => {
  let ns: TestNetns;
  let o: NftRunOptions;
  before(async () => {
    ns = await createTestNetns('weft-t-nft');
    o = { netnsPath: ns.path };
  });
  after(async () => {
    await ns.destroy();
  });

  it('ensure table/chain/set/rule twice leaves one of each', async () => {
    podAdd('10.244.0.5', 'ctr-1').apply(o);
    const second = podAdd('10.244.0.5', 'ctr-1').apply(o);
    assert.equal(second.listed, true);
    assert.doesNotMatch(second.script, /add rule/, 'second apply must not add the rule again');
    const t = listTable(T, o);
    assert.ok(t);
    assert.deepEqual([...t.chains.keys()], [MASQ_CHAIN]);
    assert.deepEqual(t.chains.get(MASQ_CHAIN)?.rules.map((r) => r.comment), [MASQ_TAG]);
    assert.deepEqual([...t.sets.keys()], [SET]);
    // Cross-check with nft's own text output, outside our parser.
    const text = await ns.exec(['nft', 'list', 'chain', 'inet', 'weft', MASQ_CHAIN]);
    assert.match(text.stdout, /type nat hook postrouting priority srcnat; policy accept;/);
    assert.equal(text.stdout.match(/masquerade/g)?.length, 1);
  });

  it('an element carries its comment; delete twice does not fail', () => {
    new NftBatch(T).addElement(SET, '10.244.0.6', { comment: 'ctr-2' }).apply(o);
    assert.deepEqual(findElementsByComment(T, SET, 'ctr-2', o), [{ key: ['10.244.0.6'], comment: 'ctr-2' }]);
    new NftBatch(T).deleteElement(SET, '10.244.0.6').apply(o);
    new NftBatch(T).deleteElement(SET, '10.244.0.6').apply(o);
    assert.deepEqual(findElementsByComment(T, SET, 'ctr-2', o), []);
    assert.deepEqual(listSet(T, SET, o)?.elements.map((e) => e.key[0]), ['10.244.0.5'], 'other pods stay');
  });

  it('a plain delete of a missing element fails, with stderr kept (why deleteElement adds first)', async () => {
    const res = await ns.exec(['nft', 'delete', 'element', 'inet', 'weft', SET, '{ 10.244.9.9 }']);
    assert.notEqual(res.code, 0);
    assert.throws(
      () => new NftBatch(T).addElement(SET, '10.244.0.7').ensureChain('no-such-1').addElement('no-such-set', '10.0.0.1').apply(o),
      (e: unknown) => e instanceof NftError && e.kind === 'failed' && e.isNotFound && /no-such-set/.test(e.stderr),
    );
    assert.equal(listSet(T, SET, o)?.elements.some((e) => e.key[0] === '10.244.0.7'), false, 'failed transaction applied nothing');
    assert.equal(listTable(T, o)?.chains.has('no-such-1'), false);
  });

  it('the masquerade rule stays one rule while 10 pods are added', () => {
    for (let i = 10; i < 20; i++) podAdd(`10.244.1.${i}`, `ctr-${i}`).apply(o);
    const t = listTable(T, o);
    assert.equal(t?.chains.get(MASQ_CHAIN)?.rules.length, 1);
    assert.equal(t?.sets.get(SET)?.elements.length, 11);
    // DEL without prevResult: find the pod by container ID, delete what was found.
    const found = findElementsByComment(T, SET, 'ctr-15', o);
    assert.deepEqual(found.map((e) => e.key), [['10.244.1.15']]);
    const del = new NftBatch(T);
    for (const e of found) del.deleteElement(SET, e.key);
    del.apply(o);
    assert.equal(listSet(T, SET, o)?.elements.length, 10);
  });

  it('deleteRulesByTag, deleteChain and deleteSet are forgiving', () => {
    const b = new NftBatch(T).deleteRulesByTag(MASQ_CHAIN, MASQ_TAG).deleteChain(MASQ_CHAIN).deleteSet(SET).deleteChain('gone-1');
    b.apply(o);
    const t = listTable(T, o);
    assert.equal(t?.chains.size, 0);
    assert.equal(t?.sets.size, 0);
    assert.equal(b.apply(o).script, '', 'nothing left to delete');
  });

  it('deleteTable removes the table and succeeds when it is absent', async () => {
    podAdd('10.244.0.5', 'ctr-1').apply(o);
    deleteTable(T, o);
    assert.equal(listTable(T, o), null);
    deleteTable(T, o);
    assert.equal((await ns.exec(['nft', 'list', 'tables'])).stdout.trim(), '');
  });

  it('one transaction may create and delete the table: it applies as a whole and leaves nothing', () => {
    for (let i = 0; i < 3; i++) {
      const r = new NftBatch(T).ensureTable().ensureSet('x-1', { type: 'ipv4_addr' }).addElement('x-1', `10.1.0.${i}`).deleteTable().apply(o);
      assert.ok(Number.isFinite(r.durationMs) && r.durationMs > 0, `durationMs ${r.durationMs}`);
      assert.equal(listTable(T, o), null);
    }
  });
});

describe('nft follows the namespace of the process that spawns it', rootOnly(), () => {
  it('a spawned nft without netnsPath sees the namespace `ip netns exec` put it in', async () => {
    const ns = await createTestNetns('weft-t-nft');
    try {
      // Ensures the child inherits the namespace of whoever spawns it (the same rule our setns path relies on).
      const lib = new URL('../../../../lib/netfilter/index.ts', import.meta.url).href;
      const code = `import('${lib}').then(m=>{new m.NftBatch({family:'ip',name:'weft'}).ensureTable().apply();console.log(JSON.stringify(m.listTable({family:'ip',name:'weft'})?.name))})`;
      const res = await ns.exec([process.execPath, '--import', 'tsx', '-e', code]);
      assert.equal(res.stdout.trim(), '"weft"', res.stderr);
      assert.match((await ns.exec(['nft', 'list', 'tables'])).stdout, /table ip weft/);
    } finally {
      await ns.destroy();
    }
  });
});
