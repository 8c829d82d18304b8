// TableApplier against the kernel, in a namespace the test creates: structure goes through `nft -f`,
// element-only and removal-only changes through one nf_tables netlink batch, and what nft lists
// afterwards is the want.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TableApplier } from '../../../../agent/policy/apply.ts';
import { desiredPolicy } from '../../../../agent/policy/desired.ts';
import { MAP_IN } from '../../../../agent/policy/groups.ts';
import { trimPod, trimPolicy } from '../../../../agent/policy/types.ts';
import { mapElementKey } from '../../../../lib/netfilter/map-elements.ts';
import { listTableAsync } from '../../../../agent/policy/list-async.ts';
import { nftExpr } from '../../../../lib/netfilter/expr.ts';
import { NfnlSocket } from '../../../../lib/netfilter/nfnl/index.ts';
import { taggedRule, type TableContent, type TableSet } from '../../../../lib/netfilter/table-diff.ts';
import { openNetns, withNetns, type NetnsHandle } from '../../../../lib/netns/index.ts';
import { createTestNetns, rootOnly, type TestNetns } from '../../../../testkit/netns.ts';

const T = { family: 'inet', name: 'weft-t-apply' } as const;

function content(pods: string[], named: string[], port = 80): TableContent {
  const sets = new Map<string, TableSet>([
    ['s-1', { spec: { type: 'ipv4_addr' }, elements: new Set(pods) }],
    ['s-6', { spec: { type: 'ipv6_addr' }, elements: new Set(pods.length > 0 ? ['fd00::1'] : []) }],
    ['n-1', { spec: { type: ['ipv4_addr', 'inet_proto', 'inet_service'] }, elements: new Set(named) }],
  ]);
  const chains = new Map([
    ['c-1', { rules: [taggedRule(nftExpr`ip saddr @s-1 tcp dport ${port} counter name k-1 accept`, 'p'), taggedRule(nftExpr`ip daddr . meta l4proto . th dport @n-1 accept`, 'n')] }],
    ['base-1', { base: { type: 'filter' as const, hook: 'forward' as const, priority: 0, policy: 'accept' as const }, rules: [taggedRule(nftExpr`jump c-1`, 'j')] }],
  ]);
  return { sets, chains, counters: new Set(['k-1']) };
}

/** Two policy-like chains, each with its own set and counter, jumped to from one base chain; `withB` false: b's chain, set, counter and jump gone, and 10.0.0.9 leaves the shared set. */
function twoPolicies(withB: boolean): TableContent {
  const sets = new Map<string, TableSet>([
    ['iso-in', { spec: { type: 'ipv4_addr' }, elements: new Set(withB ? ['10.0.0.1', '10.0.0.9'] : ['10.0.0.1']) }],
    ['s-a', { spec: { type: 'ipv4_addr' }, elements: new Set(['10.0.1.1']) }],
  ]);
  const chains = new Map<string, { base?: { type: 'filter'; hook: 'forward'; priority: number; policy: 'accept' }; rules: ReturnType<typeof taggedRule>[] }>([
    ['p-a', { rules: [taggedRule(nftExpr`ip saddr @s-a counter name k-a accept`, 'a')] }],
  ]);
  const counters = new Set(['k-a']);
  if (withB) {
    sets.set('s-b', { spec: { type: 'ipv4_addr' }, elements: new Set(['10.0.2.1', '10.0.2.2']) });
    chains.set('p-b', { rules: [taggedRule(nftExpr`ip saddr @s-b counter name k-b accept`, 'b')] });
    counters.add('k-b');
  }
  const jumps = [taggedRule(nftExpr`ip daddr != @iso-in accept`, 'iso-in'), taggedRule(nftExpr`jump p-a`, 'ja'), ...(withB ? [taggedRule(nftExpr`jump p-b`, 'jb')] : []), taggedRule(nftExpr`drop`, 'd')];
  chains.set('base-1', { base: { type: 'filter', hook: 'forward', priority: 0, policy: 'accept' }, rules: jumps });
  return { sets, chains, counters };
}

/** A verdict map m-1 whose elements jump to group chains g-<name>, looked up by one base-chain rule. */
function groups(els: Record<string, string>): TableContent {
  const names = [...new Set(Object.values(els))].sort();
  const sets = new Map<string, TableSet>([['m-1', { spec: { type: 'ipv4_addr', data: 'verdict' }, elements: new Set(Object.entries(els).map(([ip, g]) => mapElementKey(ip, `jump g-${g}`))) }]]);
  const chains = new Map<string, { base?: { type: 'filter'; hook: 'forward'; priority: number; policy: 'accept' }; rules: ReturnType<typeof taggedRule>[] }>(
    names.map((g) => [`g-${g}`, { rules: [taggedRule(nftExpr`meta l4proto tcp accept`, `g ${g}`)] }]));
  chains.set('base-1', { base: { type: 'filter', hook: 'forward', priority: 0, policy: 'accept' }, rules: [taggedRule(nftExpr`ip daddr vmap @m-1`, 'groups'), taggedRule(nftExpr`drop`, 'd')] });
  return { sets, chains };
}

describe('policy TableApplier', rootOnly(), () => {
  let ns: TestNetns;
  let h: NetnsHandle;
  let sock: NfnlSocket;
  let applier: TableApplier;
  const inNs = <R>(fn: () => R): R => withNetns(h, fn);
  // A child process forked inside the namespace; only the wait for it runs outside (withNetns takes no promise).
  const spawnedIn = <R>(fn: () => Promise<R>): Promise<R> => inNs(() => ({ p: fn() })).p;
  const list = async (): Promise<string> => {
    const r = await ns.exec(['nft', 'list', 'table', T.family, T.name]);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout;
  };

  before(async () => {
    ns = await createTestNetns('weft-t-papply');
    h = openNetns(ns.path);
    sock = inNs(() => NfnlSocket.open());
    applier = new TableApplier(T, {}, () => sock);
  });
  after(async () => {
    sock?.close();
    h?.close();
    await ns.destroy();
  });

  it('creates the table with nft, then element changes go over netlink', async () => {
    assert.equal(inNs(() => applier.apply(content(['10.0.0.1'], []))).via, 'nft');
    const r = inNs(() => applier.apply(content(['10.0.0.2', '10.0.0.3'], ['10.0.0.2 . tcp . 8080'])));
    assert.equal(r.via, 'netlink');
    assert.deepEqual([r.stats.elementsAdded, r.stats.elementsDeleted], [3, 1]);
    const text = await list();
    assert.match(text, /elements = \{ 10\.0\.0\.2, 10\.0\.0\.3 \}|elements = \{ 10\.0\.0\.3, 10\.0\.0\.2 \}/);
    assert.match(text, /10\.0\.0\.2 \. tcp \. 8080/);
    assert.equal(inNs(() => applier.apply(content(['10.0.0.2', '10.0.0.3'], ['10.0.0.2 . tcp . 8080']))).via, 'none');
  });

  it('a rule change goes through nft; emptied sets over netlink', async () => {
    assert.equal(inNs(() => applier.apply(content(['10.0.0.2'], [], 81))).via, 'nft');
    assert.match(await list(), /tcp dport 81/);
    assert.equal(inNs(() => applier.apply(content([], [], 81))).via, 'netlink');
    assert.doesNotMatch(await list(), /elements/);
  });

  it('a table removed behind its back: the refused batch is redone by nft after a re-list', async () => {
    const r = await ns.exec(['nft', 'delete', 'table', T.family, T.name]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(inNs(() => applier.apply(content(['10.0.0.7'], [], 81))).via, 'nft');
    assert.match(await list(), /10\.0\.0\.7/);
  });

  it('a removed policy (chain, set, counter, its jump, set elements) goes over netlink', async () => {
    const fresh = new TableApplier({ family: 'inet', name: 'weft-t-shrink' }, {}, () => sock);
    const listT = async (): Promise<string> => (await ns.exec(['nft', 'list', 'table', 'inet', 'weft-t-shrink'])).stdout;
    assert.equal(inNs(() => fresh.apply(twoPolicies(true))).via, 'nft');
    const r = inNs(() => fresh.apply(twoPolicies(false)));
    assert.equal(r.via, 'netlink');
    assert.deepEqual([r.stats.chainsDeleted, r.stats.setsDeleted, r.stats.chainsRewritten, r.stats.elementsDeleted], [1, 1, 1, 1]);
    const text = await listT();
    assert.doesNotMatch(text, /p-b|s-b|k-b|10\.0\.0\.9/);
    assert.match(text, /jump p-a/);
    assert.match(text, /ip daddr != @iso-in accept/);
    assert.match(text, /drop/);
    // nft sees exactly the want: re-listing from the kernel finds nothing to do.
    fresh.invalidate();
    assert.equal(inNs(() => fresh.apply(twoPolicies(false))).via, 'none');
  });

  it('a removal when the kernel\'s chain is not as applied: redone by nft', async () => {
    const fresh = new TableApplier({ family: 'inet', name: 'weft-t-shrink2' }, {}, () => sock);
    assert.equal(inNs(() => fresh.apply(twoPolicies(true))).via, 'nft');
    const r0 = await ns.exec(['nft', 'add', 'rule', 'inet', 'weft-t-shrink2', 'base-1', 'accept', 'comment', 'stray']);
    assert.equal(r0.code, 0, r0.stderr);
    assert.equal(inNs(() => fresh.apply(twoPolicies(false))).via, 'nft');
    const text = (await ns.exec(['nft', 'list', 'table', 'inet', 'weft-t-shrink2'])).stdout;
    assert.doesNotMatch(text, /p-b|stray/);
    assert.match(text, /jump p-a/);
  });

  it('a background listing takes drift as the kernel\'s content: the next apply repairs it', async () => {
    const fresh = new TableApplier({ family: 'inet', name: 'weft-t-relist' }, {}, () => sock);
    const want = content(['10.0.0.1', '10.0.0.2'], []);
    assert.equal(inNs(() => fresh.apply(want)).via, 'nft');
    const r0 = await ns.exec(['nft', 'delete', 'element', 'inet', 'weft-t-relist', 's-1', '{ 10.0.0.2 }']);
    assert.equal(r0.code, 0, r0.stderr);
    // Without a listing the applier trusts what it applied: nothing to do.
    assert.equal(inNs(() => fresh.apply(want)).via, 'none');
    assert.equal(await spawnedIn(() => fresh.relist()), true);
    const r = inNs(() => fresh.apply(want));
    assert.equal(r.via, 'netlink');
    assert.deepEqual([r.stats.elementsAdded, r.stats.elementsDeleted], [1, 0]);
    assert.match((await ns.exec(['nft', 'list', 'set', 'inet', 'weft-t-relist', 's-1'])).stdout, /10\.0\.0\.2/);
  });

  it('a background listing raced by a write is not taken', async () => {
    const fresh = new TableApplier({ family: 'inet', name: 'weft-t-race' }, {}, () => sock);
    assert.equal(inNs(() => fresh.apply(content(['10.0.0.1'], []))).via, 'nft');
    const listing = spawnedIn(() => fresh.relist());
    assert.equal(inNs(() => fresh.apply(content(['10.0.0.3'], []))).via, 'netlink');
    assert.equal(await listing, false);
    // What it holds is still the last apply's content.
    assert.equal(inNs(() => fresh.apply(content(['10.0.0.3'], []))).via, 'none');
  });

  it('a verdict map: a move to an existing group over netlink, to a new group by nft, a group left empty removed over netlink', async () => {
    const fresh = new TableApplier({ family: 'inet', name: 'weft-t-groups' }, {}, () => sock);
    const listM = async (): Promise<string> => (await ns.exec(['nft', 'list', 'table', 'inet', 'weft-t-groups'])).stdout;
    assert.equal(inNs(() => fresh.apply(groups({ '10.0.0.1': 'a', '10.0.0.2': 'b' }))).via, 'nft');
    assert.match(await listM(), /10\.0\.0\.1 : jump g-a/);
    assert.equal(inNs(() => fresh.apply(groups({ '10.0.0.1': 'b', '10.0.0.2': 'a' }))).via, 'netlink');
    assert.match(await listM(), /10\.0\.0\.1 : jump g-b/);
    assert.equal(inNs(() => fresh.apply(groups({ '10.0.0.1': 'c', '10.0.0.2': 'a' }))).via, 'nft');
    assert.match(await listM(), /10\.0\.0\.1 : jump g-c/);
    const r = inNs(() => fresh.apply(groups({ '10.0.0.1': 'c', '10.0.0.2': 'c' })));
    assert.equal(r.via, 'netlink');
    assert.equal(r.stats.chainsDeleted, 1);
    const text = await listM();
    assert.doesNotMatch(text, /g-a/);
    assert.match(text, /10\.0\.0\.2 : jump g-c/);
    // The kernel's listing reads back as the want.
    fresh.invalidate();
    assert.equal(inNs(() => fresh.apply(groups({ '10.0.0.1': 'c', '10.0.0.2': 'c' }))).via, 'none');
  });

  it('desiredPolicy\'s table: a pod\'s map element jumps to a group of its own namespace\'s policy only', async () => {
    const fresh = new TableApplier({ family: 'inet', name: 'weft-t-desired' }, {}, () => sock);
    const pod = (ns: string, name: string, ip: string) => trimPod({ metadata: { namespace: ns, name, labels: { app: 'web' } }, status: { podIP: ip, hostIP: '192.0.2.1' } })!;
    const pol = (ns: string, name: string) => trimPolicy({ metadata: { namespace: ns, name }, spec: { podSelector: { matchLabels: { app: 'web' } }, ingress: [{ from: [{ podSelector: {} }] }] } });
    const d = desiredPolicy({ policies: [pol('x', 'web'), ...Array.from({ length: 20 }, (_, i) => pol('y', `other-${i}`))], pods: [pod('x', 'a', '10.0.0.2'), pod('y', 'b', '10.0.0.3')], namespaces: new Map(), isLocal: () => true, nodeAddrs: ['10.0.0.1'] });
    assert.equal(inNs(() => fresh.apply(d.content)).via, 'nft');
    const map = (await ns.exec(['nft', 'list', 'map', 'inet', 'weft-t-desired', MAP_IN])).stdout;
    const group = /10\.0\.0\.2 : jump (gi-[0-9a-f]+)/.exec(map)?.[1];
    assert.ok(group, map);
    const chain = (await ns.exec(['nft', 'list', 'chain', 'inet', 'weft-t-desired', group])).stdout;
    const xChain = d.plans.find((p) => p.key === 'x/web')?.ingressChain ?? '';
    assert.deepEqual([...chain.matchAll(/jump (pi-[0-9a-f]+)/g)].map((m) => m[1]), [xChain], chain);
    assert.match(/10\.0\.0\.3 : jump (gi-[0-9a-f]+)/.exec(map)?.[1] ?? '', /^gi-/);
    assert.notEqual(/10\.0\.0\.3 : jump (gi-[0-9a-f]+)/.exec(map)?.[1], group);
    assert.doesNotMatch((await ns.exec(['nft', 'list', 'chain', 'inet', 'weft-t-desired', 'pol-ingress'])).stdout, /jump pi-/);
    fresh.invalidate();
    assert.equal(inNs(() => fresh.apply(d.content)).via, 'none');
  });

  it('lists counters and tables in a child process; an absent table is null', async () => {
    const state = await spawnedIn(() => listTableAsync({ family: 'inet', name: 'weft-t-relist' }, {}, 'counters'));
    assert.deepEqual([...(state?.counters?.keys() ?? [])], ['k-1']);
    assert.equal(state?.sets.size, 0);
    assert.equal(await spawnedIn(() => listTableAsync({ family: 'inet', name: 'weft-t-absent' })), null);
    await assert.rejects(listTableAsync({ family: 'inet', name: 'weft-t-relist' }, { nftBinary: '/nonexistent/nft' }), /could not be started/);
  });
});
