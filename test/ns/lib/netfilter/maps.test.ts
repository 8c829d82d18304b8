// Maps keyed by protocol . port, checked with real TCP between two test namespaces (busybox nc).
import { spawnSync, type ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { NftBatch, findElementsByComment, listSet, nftExpr } from '../../../../lib/netfilter/index.ts';
import type { NftRunOptions } from '../../../../lib/netfilter/index.ts';
import { createTestNetns, inNetns, rootOnly, spawnInNetns, type TestNetns } from '../../../../testkit/netns.ts';

const T = { family: 'inet', name: 'weft' } as const;
const SERVER_IP = '10.99.0.2';

function ipOk(args: string[]): void {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  assert.equal(r.status, 0, `ip ${args.join(' ')}: ${r.stderr}`);
}

/** Connects from the client namespace; returns what the server sent ('' when refused/dropped). */
function connect(client: TestNetns, port: number): string {
  const [file = 'ip', ...args] = inNetns(client.name, ['busybox', 'nc', '-w', '1', SERVER_IP, String(port)]);
  const r = spawnSync(file, args, { encoding: 'utf8', input: '', timeout: 4000 });
  return r.stdout.trim();
}

describe('portmap-style maps keyed by l4proto . dport', rootOnly(), () => {
  let client: TestNetns;
  let server: TestNetns;
  let o: NftRunOptions;
  const listeners: ChildProcess[] = [];

  before(async () => {
    client = await createTestNetns('weft-t-nftc');
    server = await createTestNetns('weft-t-nfts');
    o = { netnsPath: server.path };
    ipOk(['-n', client.name, 'link', 'add', 'wt-c', 'type', 'veth', 'peer', 'name', 'wt-s', 'netns', server.name]);
    ipOk(['-n', client.name, 'addr', 'add', '10.99.0.1/24', 'dev', 'wt-c']);
    ipOk(['-n', server.name, 'addr', 'add', `${SERVER_IP}/24`, 'dev', 'wt-s']);
    ipOk(['-n', client.name, 'link', 'set', 'wt-c', 'up']);
    ipOk(['-n', server.name, 'link', 'set', 'wt-s', 'up']);
    // Persistent listeners (-ll with -e) on 9090 and 9091, each answering its own name.
    for (const port of [9090, 9091]) {
      listeners.push(spawnInNetns(server.name, ['busybox', 'nc', '-ll', '-p', String(port), '-e', '/bin/echo', `port-${port}`], { stdio: 'ignore' }));
    }
    await new Promise((r) => setTimeout(r, 300));
  });
  after(async () => {
    for (const l of listeners) l.kill();
    await client.destroy();
    await server.destroy();
  });

  it('without rules the listeners answer directly', () => {
    assert.equal(connect(client, 9090), 'port-9090');
    assert.equal(connect(client, 8080), '');
  });

  it('a DNAT map (proto . port : addr . port) forwards 8080 to 9090, one rule for all mappings', () => {
    new NftBatch(T)
      .ensureTable()
      .ensureChain('portmap-pre', { type: 'nat', hook: 'prerouting', priority: 'dstnat' })
      .ensureMap('portmap-4', { type: ['inet_proto', 'inet_service'], data: ['ipv4_addr', 'inet_service'], comment: 'hostPort to pod' })
      .ensureRule('portmap-pre', nftExpr`dnat ip to meta l4proto . th dport map @${'portmap-4'}`, 'weft-portmap v4')
      .addElement('portmap-4', ['tcp', 8080], { comment: 'ctr-a', data: [SERVER_IP, 9090] })
      .addElement('portmap-4', ['tcp', 8081], { comment: 'ctr-b', data: [SERVER_IP, 9091] })
      .apply(o);
    assert.equal(connect(client, 8080), 'port-9090');
    assert.equal(connect(client, 8081), 'port-9091');
    assert.deepEqual(findElementsByComment(T, 'portmap-4', 'ctr-a', { ...o, kind: 'map' }), [{ key: ['tcp', 8080], data: [SERVER_IP, 9090], comment: 'ctr-a' }]);
  });

  it('deleting one mapping (twice) stops only that port', () => {
    for (let i = 0; i < 2; i++) new NftBatch(T).deleteElement('portmap-4', ['tcp', 8080], { data: [SERVER_IP, 9090] }).apply(o);
    assert.equal(connect(client, 8080), '');
    assert.equal(connect(client, 8081), 'port-9091');
    assert.equal(listSet(T, 'portmap-4', { ...o, kind: 'map' })?.elements.length, 1);
  });

  it("deleteElement on a map refuses to remove another owner's mapping of the same key", () => {
    assert.throws(() => new NftBatch(T).deleteElement('portmap-4', ['tcp', 8081], { data: [SERVER_IP, 9999] }).apply(o), /File exists|exists/);
    assert.equal(connect(client, 8081), 'port-9091');
  });

  it('a verdict map keyed by proto . port drops what it lists', () => {
    new NftBatch(T)
      .ensureChain('filter-in', { type: 'filter', hook: 'input', priority: 'filter', policy: 'accept' })
      .ensureMap('ports-vm', { type: ['inet_proto', 'inet_service'], data: 'verdict' })
      .ensureRule('filter-in', nftExpr`meta l4proto . th dport vmap @${'ports-vm'}`, 'weft-vmap')
      .addElement('ports-vm', ['tcp', 9090], { data: 'drop', comment: 'block-9090' })
      .apply(o);
    assert.equal(connect(client, 9090), '');
    assert.equal(connect(client, 9091), 'port-9091');
  });
});
