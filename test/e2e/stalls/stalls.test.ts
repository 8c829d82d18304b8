// Issue 20, time limits: a plugin waiting on something outside it (a host-local lock held by another
// process, an nft child that hangs) answers code 11 within WEFT_STALL_TIMEOUT_MS, names what stalled,
// and leaves the node as it found it (ADD's rollback, the bridge it created included). DEL under a
// stall removes what it can and answers 11, so the runtime retries the rest. Built binaries, node netns.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { execPlugin, type PluginRun } from '../../../testkit/cni-runner.ts';
import { Topology, nsRun, type SimNode, type SimPod } from '../../../testkit/topology.ts';
import { isRoot } from '../../../testkit/netns.ts';
import { diffLines, fingerprint } from '../validate-first/fingerprint.ts';

const BIN_DIR = join(import.meta.dirname, '..', '..', '..', 'dist', 'bin');
const skip = !isRoot() ? 'needs root' : !existsSync(join(BIN_DIR, 'bridge')) ? 'dist/bin missing: run npm run build' : false;
// Short in tests; the default (10 s) is documented in docs/security.md.
const STALL_ENV = { WEFT_STALL_TIMEOUT_MS: '600' };

/** Holds an exclusive flock on `file` in another process until killed; resolves once it is held. */
async function holdLock(file: string): Promise<ChildProcess> {
  // One process holding the lock (exec, no child to inherit it), so killing it releases the lock.
  const holder = spawn('sh', ['-c', 'exec 9<>"$0" && flock -x 9 && exec sleep 600', file], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    if (spawnSync('flock', ['-n', file, 'true']).status !== 0) return holder;
    await new Promise((r) => setTimeout(r, 50));
  }
  holder.kill('SIGKILL');
  throw new Error(`could not take ${file}`);
}

describe('stalls: bounded waits answer code 11 (built binaries, node netns)', { skip, timeout: 240_000 }, () => {
  let topo: Topology;
  let node: SimNode;
  let pod: SimPod;
  let data: string;
  let fakeNft: string;
  const holders: ChildProcess[] = [];
  // After a rollback that released an address, host-local's allocation cursor (last_reserved_ip, kept
  // as the reference keeps it), its lock file and its holder-index cache may have moved: all else must not.
  const fp = async () => (await fingerprint(node.netns, pod.netns, [data])).split('\n').filter((l) => !/^(stallnet\/(last_reserved_ip\.|lock )|\.weft-index)/.test(l)).join('\n');

  const run = (plugin: string, command: string, conf: Record<string, unknown>, o: { ifName?: string; wrap?: string[] } = {}): Promise<PluginRun> =>
    execPlugin(join(BIN_DIR, plugin), {
      CNI_COMMAND: command, CNI_CONTAINERID: 'stall-ctr', CNI_NETNS: pod.path, CNI_IFNAME: o.ifName ?? 'eth1', CNI_ARGS: '', CNI_PATH: BIN_DIR, ...STALL_ENV,
    }, JSON.stringify(conf), { binDirs: [BIN_DIR], nodeNetns: node.netns, timeoutMs: 60_000, ...(o.wrap ? { wrap: o.wrap } : {}) });
  // nft replaced, in a private mount namespace of this one run only, by a script that never returns.
  const hungNft = (): string[] => ['unshare', '-m', '--propagation', 'private', 'sh', '-c', 'mount --bind "$0" /usr/sbin/nft && exec "$@"', fakeNft];

  const bridgeConf = (extra: Record<string, unknown> = {}) => ({
    cniVersion: '1.0.0', name: 'stallnet', type: 'bridge', bridge: 'cni0', isGateway: true, ipMasq: false,
    ipam: { type: 'host-local', ranges: [[{ subnet: '10.77.0.0/24' }]], dataDir: data }, ...extra,
  });
  const firewallConf = (name: string) => ({
    cniVersion: '1.0.0', name, type: 'firewall', backend: 'iptables',
    prevResult: { cniVersion: '1.0.0', interfaces: [{ name: 'cni0' }, { name: 'eth0', sandbox: pod.path }], ips: [{ address: '10.77.0.19/24', interface: 1 }] },
  });
  const assertStall = (r: PluginRun, what: RegExp): void => {
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.equal(r.json?.['code'], 11, r.stdout);
    assert.match(String(r.json?.['msg']), what);
  };

  before(async () => {
    topo = await Topology.create({ nodes: 1, prefix: `wst${randomBytes(2).toString('hex')}` });
    node = topo.nodes[0] as SimNode;
    pod = await topo.addPod(node, 1);
    data = join(topo.dir, 'data');
    mkdirSync(join(data, 'stallnet'), { recursive: true });
    fakeNft = join(topo.dir, 'nft-that-hangs');
    writeFileSync(fakeNft, '#!/bin/sh\nexec sleep 600\n');
    chmodSync(fakeNft, 0o755);
  });
  after(() => {
    for (const h of holders) h.kill('SIGKILL');
    topo?.destroySync();
  });

  it('host-local ADD with its lock held by another process: code 11 naming the lock, nothing reserved; then ADD works', async () => {
    const lock = join(data, 'stallnet', 'lock');
    const holder = await holdLock(lock);
    holders.push(holder);
    const before = await fp();
    const r = await run('host-local', 'ADD', bridgeConf());
    assertStall(r, /host-local: lock .*stallnet\/lock is held by another process/);
    assert.match(String(r.json?.['details']), /WEFT_STALL_TIMEOUT_MS/);
    assert.equal(await fp(), before);
    const del = await run('host-local', 'DEL', bridgeConf());
    assertStall(del, /lock .* is held/);
    holder.kill('SIGKILL');
    await new Promise((res) => holder.once('exit', res));
    const ok = await run('host-local', 'ADD', bridgeConf());
    assert.equal(ok.code, 0, ok.stdout);
    assert.equal((await run('host-local', 'DEL', bridgeConf())).code, 0);
    assert.deepEqual(readdirSync(join(data, 'stallnet')).filter((f) => /^\d/.test(f)), []);
  });

  it('bridge ADD whose IPAM lock is held: code 11, and the bridge it created, the veth and everything else are gone', async () => {
    const holder = await holdLock(join(data, 'stallnet', 'lock'));
    holders.push(holder);
    const before = await fp();
    const r = await run('bridge', 'ADD', bridgeConf());
    assertStall(r, /lock .* is held by another process/);
    const now = await fp();
    assert.equal(now, before, diffLines(before, now));
    holder.kill('SIGKILL');
    await new Promise((res) => holder.once('exit', res));
  });

  it('bridge ADD with ipMasq when nft hangs: code 11 naming nft and the bound; the node is unchanged', async () => {
    const before = await fp();
    const r = await run('bridge', 'ADD', bridgeConf({ ipMasq: true }), { wrap: hungNft() });
    assertStall(r, /nftables: .*nft did not finish within 600 ms \(WEFT_STALL_TIMEOUT_MS\)/);
    const now = await fp();
    assert.equal(now, before, diffLines(before, now));
  });

  it('bridge ADD on an existing bridge without its gateway, ip_forward off, when nft hangs: the address and ip_forward are as before', async () => {
    // Not made by this ADD, so rollback keeps the bridge: what it added to it must go instead.
    await nsRun(node.netns, ['ip', 'link', 'add', 'stallbr1', 'type', 'bridge']);
    await nsRun(node.netns, ['ip', 'link', 'set', 'stallbr1', 'up']);
    const forward = (await nsRun(node.netns, ['sysctl', '-n', 'net.ipv4.ip_forward'])).trim();
    await nsRun(node.netns, ['sysctl', '-qw', 'net.ipv4.ip_forward=0']);
    try {
      // A port attached and detached leaves the bridge's carrier and STP ids recomputed by the kernel
      // (net/bridge/br_if.c, br_stp_if.c): no setting of ours, so those fields of its line are left out.
      const settled = async (): Promise<string> => (await fp()).split('\n').map((l) => (/^\d+: stallbr1: /.test(l)
        ? l.replace(/<[^>]*>/, '<>').replace(/ state \S+/, '').replace(/ (bridge_id|designated_root) \S+/g, '') : l)).join('\n');
      const before = await settled();
      const r = await run('bridge', 'ADD', bridgeConf({ bridge: 'stallbr1', ipMasq: true }), { wrap: hungNft() });
      assertStall(r, /nft did not finish within 600 ms/);
      const now = await settled();
      assert.equal(now, before, diffLines(before, now));
      assert.equal((await nsRun(node.netns, ['ip', '-o', 'addr', 'show', 'dev', 'stallbr1'])).includes('10.77.0.1/24'), false, 'the gateway address this ADD added is gone');
      assert.equal((await nsRun(node.netns, ['sysctl', '-n', 'net.ipv4.ip_forward'])).trim(), '0', 'ip_forward is back off');
    } finally {
      await nsRun(node.netns, ['sysctl', '-qw', `net.ipv4.ip_forward=${forward}`]);
      await nsRun(node.netns, ['ip', 'link', 'del', 'stallbr1']);
    }
  });

  it('bridge DEL when nft hangs: the element goes over netlink, so DEL succeeds and removes the veth and the address', async () => {
    const conf = bridgeConf({ ipMasq: true });
    const add = await run('bridge', 'ADD', conf);
    assert.equal(add.code, 0, add.stdout);
    // DEL removes the masquerade element over netlink in-process: a hung nft is never waited for.
    // (Were the nft fallback to stall, DEL would still remove the veth and the address, then answer 11.)
    const del = await run('bridge', 'DEL', conf, { wrap: hungNft() });
    assert.equal(del.code, 0, del.stdout);
    const links = await nsRun(node.netns, ['ip', '-o', 'link', 'show', 'master', 'cni0']);
    assert.equal(links.trim(), '', 'the veth is removed even when nft stalls');
    assert.deepEqual(readdirSync(join(data, 'stallnet')).filter((f) => /^\d/.test(f)), [], 'the address is released');
    assert.equal((await run('bridge', 'DEL', conf)).code, 0);
  });

  it('portmap ADD when nft hangs: code 11 naming nft; the node is unchanged', async () => {
    await nsRun(pod.netns, ['ip', 'link', 'add', 'eth0', 'type', 'veth', 'peer', 'name', 'eth0p']);
    await nsRun(pod.netns, ['ip', 'addr', 'add', '10.77.0.9/24', 'dev', 'eth0']);
    const conf = {
      cniVersion: '1.0.0', name: 'stallnet', type: 'portmap', runtimeConfig: { portMappings: [{ hostPort: 18090, containerPort: 80, protocol: 'tcp' }] },
      prevResult: { cniVersion: '1.0.0', interfaces: [{ name: 'eth0', sandbox: pod.path }], ips: [{ address: '10.77.0.9/24', interface: 0 }] },
    };
    const before = await fp();
    const r = await run('portmap', 'ADD', conf, { ifName: 'eth0', wrap: hungNft() });
    assertStall(r, /nft did not finish within 600 ms/);
    const now = await fp();
    assert.equal(now, before, diffLines(before, now));
  });
  it('firewall ADD, the first of its network (its sets need nft -f), when nft hangs: code 11 naming nft; the node is unchanged', async () => {
    const conf = firewallConf('stallfw1');
    const before = await fp();
    const r = await run('firewall', 'ADD', conf, { ifName: 'eth0', wrap: hungNft() });
    assertStall(r, /nft did not finish within 600 ms/);
    const now = await fp();
    assert.equal(now, before, diffLines(before, now));
  });

  it('firewall DEL when nft hangs: the elements go over netlink, so DEL succeeds and leaves no element', async () => {
    const conf = firewallConf('stallfw2');
    const add = await run('firewall', 'ADD', conf, { ifName: 'eth0' });
    assert.equal(add.code, 0, add.stdout + add.stderr);
    const withElems = await nsRun(node.netns, ['nft', 'list', 'table', 'inet', 'weft']);
    assert.match(withElems, /10\.77\.0\.19/, 'ADD put the pod address into a set');
    const del = await run('firewall', 'DEL', conf, { ifName: 'eth0', wrap: hungNft() });
    assert.equal(del.code, 0, del.stdout + del.stderr);
    assert.doesNotMatch(await nsRun(node.netns, ['nft', 'list', 'table', 'inet', 'weft']), /10\.77\.0\.19/, 'DEL removed the element');
  });
});
