// nf_tables elements over netlink against the kernel, in namespaces created by the test; `nft -j`
// (run in the same namespace) cross-checks both directions: what we add, nft lists; what nft adds, we list.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { NfnlBatchError, NfnlElemBatch, NfnlSocket, findSetElemsByComment, formatKeyBytes, listSetElems, parseKeyBytes, prefixElems } from '../../../../lib/netfilter/nfnl/index.ts';
import { openNetns, withNetns } from '../../../../lib/netns/index.ts';
import { openSysTransport } from '../../../../lib/netlink/socket.ts';
import { NETLINK_NETFILTER } from '../../../../lib/netfilter/nfnl/constants.ts';
import { createTestNetns, rootOnly, run, type TestNetns, inNetns } from '../../../../testkit/netns.ts';

const T = { family: 'inet', name: 'weft' } as const;
const SCRIPT = `
add table inet weft
add set inet weft pods4 { type ipv4_addr; }
add set inet weft pods6 { type ipv6_addr; }
add set inet weft nets4 { type ipv4_addr; flags interval; }
add map inet weft ports-map { type ipv4_addr . inet_service : ipv4_addr . inet_service; }
add map inet weft vmap-1 { type inet_service : verdict; }
add chain inet weft sub-1
`;

interface NftElemJson { elem?: { val: unknown; comment?: string }; prefix?: unknown }

describe('nf_tables elements over netlink', rootOnly(), () => {
  let ns: TestNetns;
  let sock: NfnlSocket;
  const nft = async (...args: string[]): Promise<string> => {
    const r = await ns.exec(['nft', ...args]);
    assert.equal(r.code, 0, `nft ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const nftElems = async (kind: string, set: string): Promise<unknown[]> => {
    const j = JSON.parse(await nft('-j', 'list', kind, 'inet', 'weft', set)) as { nftables: Array<Record<string, { elem?: unknown[] }>> };
    return j.nftables.flatMap((o) => o['set']?.elem ?? o['map']?.elem ?? []);
  };

  before(async () => {
    ns = await createTestNetns('weft-t-nfnl');
    const r = await run(inNetns(ns.name, ['nft', '-f', '-']), SCRIPT);
    assert.equal(r.code, 0, r.stderr);
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

  it('adds elements with comments that nft lists', async () => {
    new NfnlElemBatch(T)
      .add('pods4', [{ key: formatKeyBytes('ipv4_addr', '10.1.2.3'), comment: 'ctr-1/eth0' }, { key: formatKeyBytes('ipv4_addr', '10.1.2.4'), comment: 'ctr-2/eth0' }])
      .add('pods6', [{ key: formatKeyBytes('ipv6_addr', 'fd00::5'), comment: 'ctr-1/eth0' }])
      .commit(sock);
    const elems = (await nftElems('set', 'pods4')) as NftElemJson[];
    assert.deepEqual(elems, [{ elem: { val: '10.1.2.3', comment: 'ctr-1/eth0' } }, { elem: { val: '10.1.2.4', comment: 'ctr-2/eth0' } }]);
    assert.match(await nft('list', 'set', 'inet', 'weft', 'pods6'), /fd00::5 comment "ctr-1\/eth0"/);
  });

  it('lists elements nft added, with their comments', async () => {
    await nft('add', 'element', 'inet', 'weft', 'pods4', '{ 10.1.2.9 comment "from-nft/eth1" }');
    const found = findSetElemsByComment(sock, T, 'pods4', 'from-nft/eth1');
    assert.deepEqual(found.map((e) => parseKeyBytes('ipv4_addr', e.key)), [['10.1.2.9']]);
    const all = listSetElems(sock, T, 'pods4') ?? [];
    assert.deepEqual(all.map((e) => [parseKeyBytes('ipv4_addr', e.key)[0], e.comment]).sort(), [
      ['10.1.2.3', 'ctr-1/eth0'], ['10.1.2.4', 'ctr-2/eth0'], ['10.1.2.9', 'from-nft/eth1'],
    ]);
  });

  it('adding an existing element again is a no-op (one copy, first comment kept)', async () => {
    new NfnlElemBatch(T).add('pods4', [{ key: formatKeyBytes('ipv4_addr', '10.1.2.3'), comment: 'ctr-1/eth0' }]).commit(sock);
    const elems = (await nftElems('set', 'pods4')) as NftElemJson[];
    assert.equal(elems.filter((e) => e.elem?.val === '10.1.2.3').length, 1);
  });

  it('deletes elements; absent ones (and absent sets) are not an error; others stay', async () => {
    const b = new NfnlElemBatch(T)
      .delete('pods4', [{ key: formatKeyBytes('ipv4_addr', '10.1.2.3') }, { key: formatKeyBytes('ipv4_addr', '10.9.9.9') }])
      .delete('no-such-set', [{ key: formatKeyBytes('ipv4_addr', '10.1.2.4') }]);
    b.commit(sock);
    b.commit(sock); // a second DEL
    const vals = ((await nftElems('set', 'pods4')) as NftElemJson[]).map((e) => e.elem?.val).sort();
    assert.deepEqual(vals, ['10.1.2.4', '10.1.2.9']);
  });

  it('a batch with one refused add applies nothing and reports ENOENT', async () => {
    const b = new NfnlElemBatch(T)
      .add('pods4', [{ key: formatKeyBytes('ipv4_addr', '10.1.2.77'), comment: 'x/eth0' }])
      .add('missing-set', [{ key: formatKeyBytes('ipv4_addr', '10.1.2.78') }]);
    assert.throws(() => b.commit(sock), (e: unknown) => e instanceof NfnlBatchError && e.code === 'ENOENT' && e.failures[0]?.index === 1);
    const vals = ((await nftElems('set', 'pods4')) as NftElemJson[]).map((e) => e.elem?.val);
    assert.ok(!vals.includes('10.1.2.77'), 'the whole transaction was rolled back');
  });

  it('a key of the wrong length is refused by the kernel (EINVAL)', () => {
    const b = new NfnlElemBatch(T).add('pods4', [{ key: formatKeyBytes('ipv6_addr', 'fd00::1') }]);
    assert.throws(() => b.commit(sock), (e: unknown) => e instanceof NfnlBatchError && e.code === 'EINVAL');
  });

  it('interval prefixes: added twice, listed by nft as one prefix, deleted', async () => {
    new NfnlElemBatch(T).add('nets4', [...prefixElems('10.1.2.0/24'), ...prefixElems('10.1.3.0/24')]).commit(sock);
    new NfnlElemBatch(T).add('nets4', prefixElems('10.1.2.7/24')).commit(sock);
    const text = await nft('list', 'set', 'inet', 'weft', 'nets4');
    assert.match(text, /10\.1\.2\.0\/24/);
    assert.match(text, /10\.1\.3\.0\/24/);
    const elems = await nftElems('set', 'nets4');
    assert.equal(elems.length, 2, JSON.stringify(elems));
    new NfnlElemBatch(T).delete('nets4', prefixElems('10.1.2.0/24')).commit(sock);
    assert.doesNotMatch(await nft('list', 'set', 'inet', 'weft', 'nets4'), /10\.1\.2\.0\/24/);
    assert.match(await nft('list', 'set', 'inet', 'weft', 'nets4'), /10\.1\.3\.0\/24/);
  });

  it('map elements: concatenated key and data, and verdicts', async () => {
    const types = ['ipv4_addr', 'inet_service'] as const;
    new NfnlElemBatch(T)
      .add('ports-map', [{ key: formatKeyBytes(types, ['10.0.0.1', 8080]), data: formatKeyBytes(types, ['10.1.2.4', 80]), comment: 'ctr-2/eth0' }])
      .add('vmap-1', [{ key: formatKeyBytes('inet_service', 53), data: { verdict: 'jump', chain: 'sub-1' } }, { key: formatKeyBytes('inet_service', 22), data: { verdict: 'drop' } }])
      .commit(sock);
    assert.match(await nft('list', 'map', 'inet', 'weft', 'ports-map'), /10\.0\.0\.1 \. 8080 comment "ctr-2\/eth0" : 10\.1\.2\.4 \. 80/);
    const vm = await nft('list', 'map', 'inet', 'weft', 'vmap-1');
    assert.match(vm, /53 : jump sub-1/);
    assert.match(vm, /22 : drop/);
    const listed = listSetElems(sock, T, 'ports-map') ?? [];
    assert.equal(listed.length, 1);
    const data = listed[0]?.data;
    assert.ok(data instanceof Uint8Array);
    assert.deepEqual(parseKeyBytes(types, data), ['10.1.2.4', 80]);
    const verdicts = (listSetElems(sock, T, 'vmap-1') ?? []).map((e) => [parseKeyBytes('inet_service', e.key)[0], e.data]);
    assert.deepEqual(verdicts.sort(), [[22, { verdict: 'drop' }], [53, { verdict: 'jump', chain: 'sub-1' }]]);
  });

  it('a large set is dumped in skbs of up to 32 KiB, not ~4 KiB ones (each skb restarts the set walk)', async () => {
    await nft('add', 'set', 'inet', 'weft', 'big4', '{ type ipv4_addr . ipv4_addr; }');
    const ips = Array.from({ length: 20_000 }, (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
    for (let i = 0; i < ips.length; i += 2000) new NfnlElemBatch(T).add('big4', ips.slice(i, i + 2000).map((ip) => ({ key: formatKeyBytes(['ipv4_addr', 'ipv4_addr'], [ip, ip]) }))).commit(sock);
    const h = openNetns(ns.path);
    const sizes: number[] = [];
    try {
      const t = withNetns(h, () => openSysTransport(NETLINK_NETFILTER, 0));
      const recorded = { send: t.send, close: t.close, recv: (ms: number) => { const b = t.recv(ms); if (b !== null) sizes.push(b.length); return b; } };
      const s = NfnlSocket.fromTransport(recorded);
      try {
        assert.equal(listSetElems(s, T, 'big4')?.length, 20_000);
      } finally {
        s.close();
      }
    } finally {
      h.close();
    }
    // netlink_dump sizes its skbs by the largest buffer the reader offered (max_recvmsg_len): a
    // reader offering only what each datagram needs keeps them at NLMSG_GOODSIZE.
    const biggest = Math.max(...sizes);
    assert.ok(biggest > 16_384, `largest datagram ${biggest} bytes over ${sizes.length} datagrams`);
    assert.ok(sizes.length < 60, `${sizes.length} datagrams for 20,000 elements`);
  });

  it('listing an absent set or table gives null', () => {
    assert.equal(listSetElems(sock, T, 'nope-1'), null);
    assert.equal(listSetElems(sock, { family: 'inet', name: 'nope-2' }, 'pods4'), null);
  });
});
