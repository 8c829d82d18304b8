// DEL never blocks cleanup: for every plugin, ADD with a good config, then DEL with one key mutated
// (unknown or unsupported keys, out-of-range values, wrong types, missing netns, missing, foreign or
// broken prevResult, odd cniVersion). DEL must exit 0 and leave nothing of the pod: no address file,
// no veth, no nft element naming the container, lo down (when DEL is told the netns), no stored flannel
// delegate. The network name and ipam.type/dataDir (flannel: dataDir) are not mutated: they say where
// the pod's state is.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { execPlugin, type PluginRun } from '../../../testkit/cni-runner.ts';
import { createTestNetns, ipJson, rootOnly, type TestNetns } from '../../../testkit/netns.ts';

const BIN = join(import.meta.dirname, '..', '..', '..', 'dist', 'bin');
const NET = 'delnet';

/** A mutation of one plugin's DEL input: the config (and CNI_NETNS) as DEL gets them. */
interface Mutation {
  name: string;
  conf?: (c: Record<string, unknown>) => Record<string, unknown> | string;
  noNetns?: boolean;
  bogusNetns?: boolean;
}

const set = (k: string, v: unknown) => (c: Record<string, unknown>) => ({ ...c, [k]: v });
const drop = (k: string) => (c: Record<string, unknown>) => Object.fromEntries(Object.entries(c).filter(([x]) => x !== k));
const nested = (k: string, sub: Record<string, unknown>) => (c: Record<string, unknown>) => ({ ...c, [k]: { ...(c[k] as Record<string, unknown>), ...sub } });

const COMMON: Mutation[] = [
  { name: 'as ADD had it' },
  { name: 'unknown keys', conf: (c) => ({ ...c, fooBar: { x: 1 }, zzz: [null] }) },
  { name: 'key case variants', conf: (c) => Object.fromEntries(Object.entries(c).map(([k, v]) => [k === 'name' ? k : k.toUpperCase(), v])) },
  { name: 'cniVersion 9.9.9', conf: set('cniVersion', '9.9.9') },
  { name: 'cniVersion number', conf: set('cniVersion', 5) },
  { name: 'cniVersion missing', conf: drop('cniVersion') },
  { name: 'type number', conf: set('type', 5) },
  { name: 'dns wrong type', conf: set('dns', 5) },
  { name: 'capabilities wrong type', conf: set('capabilities', 'x') },
  { name: 'runtimeConfig wrong type', conf: set('runtimeConfig', 'x') },
  { name: 'args wrong type', conf: set('args', [1]) },
  { name: 'prevResult missing', conf: drop('prevResult') },
  { name: 'prevResult foreign', conf: set('prevResult', { cniVersion: '1.0.0', ips: [{ address: '192.0.2.77/24' }] }) },
  { name: 'prevResult wrong type', conf: set('prevResult', 'x') },
  { name: 'prevResult broken', conf: set('prevResult', { cniVersion: '7.7.7', ips: 'x' }) },
  { name: 'CNI_NETNS unset', noNetns: true },
  { name: 'CNI_NETNS gone', bogusNetns: true },
];

const PER_PLUGIN: Record<string, Mutation[]> = {
  bridge: [
    { name: 'unsupported vlanTrunk', conf: set('vlanTrunk', [{ id: 5 }]) },
    { name: 'ipMasqBackend iptables', conf: set('ipMasqBackend', 'iptables') },
    { name: 'mtu out of range', conf: set('mtu', 10) },
    { name: 'mtu wrong type', conf: set('mtu', '1400') },
    { name: 'ipMasq wrong type', conf: set('ipMasq', 'yes') },
    { name: 'ipMasq now false', conf: set('ipMasq', false) },
    { name: 'macspoofchk now false', conf: set('macspoofchk', false) },
    { name: 'hairpin and promisc', conf: (c) => ({ ...c, hairpinMode: true, promiscMode: true }) },
    { name: 'bridge name too long', conf: set('bridge', 'a-much-too-long-name') },
    { name: 'ipam.subnet wrong type', conf: nested('ipam', { subnet: 5 }) },
    { name: 'ipam.ranges wrong type', conf: nested('ipam', { ranges: 'x' }) },
    { name: 'ipam.routes wrong type', conf: nested('ipam', { routes: { dst: 1 } }) },
    { name: 'runtimeConfig.mac multicast', conf: set('runtimeConfig', { mac: '01:00:5e:00:00:01' }) },
  ],
  'host-local': [
    { name: 'ranges wrong type', conf: nested('ipam', { ranges: 'x' }) },
    { name: 'subnet not a CIDR', conf: nested('ipam', { subnet: '10.0.0.1', ranges: undefined }) },
    { name: 'range out of subnet', conf: nested('ipam', { ranges: [[{ subnet: '10.95.0.0/24', rangeStart: '10.96.0.1' }]] }) },
    { name: 'ipRanges wrong type', conf: set('runtimeConfig', { ipRanges: 5 }) },
    { name: 'args.cni.ips outside', conf: set('args', { cni: { ips: ['203.0.113.9'] } }) },
    { name: 'resolvConf missing file', conf: nested('ipam', { resolvConf: '/nonexistent/resolv.conf' }) },
  ],
  portmap: [
    { name: 'markMasqBit out of range', conf: set('markMasqBit', 99) },
    { name: 'markMasqBit with externalSetMarkChain', conf: (c) => ({ ...c, markMasqBit: 13, externalSetMarkChain: 'KUBE-MARK-MASQ' }) },
    { name: 'snat wrong type', conf: set('snat', 'no') },
    { name: 'hostPort 0', conf: set('runtimeConfig', { portMappings: [{ hostPort: 0, containerPort: 80 }] }) },
    { name: 'portMappings wrong type', conf: set('runtimeConfig', { portMappings: 'x' }) },
    { name: 'portMappings changed', conf: set('runtimeConfig', { portMappings: [{ hostPort: 19999, containerPort: 81, protocol: 'udp' }] }) },
    { name: 'protocol unknown', conf: set('runtimeConfig', { portMappings: [{ hostPort: 18081, containerPort: 80, protocol: 'icmp' }] }) },
  ],
  loopback: [],
};

const FLANNEL_TYPES = ['flannel', 'flannel-vxlan', 'host-gw', 'flannel-udp'];
const FLANNEL_MUTATIONS: Mutation[] = [
  { name: 'subnetFile wrong type', conf: set('subnetFile', 5) },
  { name: 'subnetFile missing file', conf: set('subnetFile', '/nonexistent/subnet.env') },
  { name: 'delegate wrong type', conf: set('delegate', 'bridge') },
  { name: 'delegate.type number', conf: set('delegate', { type: 5 }) },
  { name: 'delegate with name and ipam', conf: set('delegate', { name: 'x', ipam: {} }) },
  { name: 'delegate now macvlan', conf: set('delegate', { type: 'macvlan' }) },
  { name: 'ipam wrong type', conf: set('ipam', 'x') },
];
for (const t of FLANNEL_TYPES) PER_PLUGIN[t] = FLANNEL_MUTATIONS;

let node: TestNetns;
let dataDir: string;
let flannelDir: string;
let serial = 0;

function bridgeConf(): Record<string, unknown> {
  return { cniVersion: '1.0.0', name: NET, type: 'bridge', bridge: 'cni0', isGateway: true, ipMasq: true, macspoofchk: true, ipam: { type: 'host-local', ranges: [[{ subnet: '10.95.0.0/24' }]], dataDir } };
}

function run(plugin: string, command: 'ADD' | 'DEL', id: string, netns: string | undefined, stdin: string, ifName = 'eth0'): Promise<PluginRun> {
  const env: NodeJS.ProcessEnv = { CNI_COMMAND: command, CNI_CONTAINERID: id, CNI_IFNAME: ifName, CNI_PATH: BIN };
  if (netns !== undefined) env['CNI_NETNS'] = netns;
  return execPlugin(join(BIN, plugin), env, stdin, { binDirs: [BIN], nodeNetns: node.name });
}

/** What of container `id` is still there: address files, veths, nft elements naming it. */
async function leftovers(id: string): Promise<string[]> {
  const out: string[] = [];
  const dir = join(dataDir, NET);
  for (const f of (() => { try { return readdirSync(dir); } catch { return []; } })()) {
    if (readFileSync(join(dir, f), 'utf8').startsWith(id)) out.push(`address file ${f}`);
  }
  const links = await ipJson<Array<{ ifname: string; linkinfo?: { info_kind?: string } }>>(node, ['-d', 'link', 'show']);
  for (const l of links) if (l.linkinfo?.info_kind === 'veth') out.push(`veth ${l.ifname}`);
  const nft = await node.exec(['nft', 'list', 'ruleset']);
  for (const line of nft.stdout.split('\n')) if (line.includes(id)) out.push(`nft: ${line.trim()}`);
  return out;
}

/** The ADD, DEL-with-mutation, check sequence of one plugin; returns the failures. */
async function exercise(plugin: string, m: Mutation): Promise<string | undefined> {
  const id = `del-${process.pid}-${serial++}`;
  const pod = await createTestNetns('weft-del');
  try {
    // The good config and its ADD (bridge's result is portmap's prevResult).
    let conf: Record<string, unknown>;
    let ifName = 'eth0';
    if (plugin === 'bridge' || plugin === 'portmap') {
      const br = await run('bridge', 'ADD', id, pod.path, JSON.stringify(bridgeConf()));
      if (br.code !== 0) return `bridge ADD failed: ${br.stdout}`;
      conf = plugin === 'bridge' ? { ...bridgeConf(), prevResult: br.json } : {
        cniVersion: '1.0.0', name: NET, type: 'portmap', capabilities: { portMappings: true },
        runtimeConfig: { portMappings: [{ hostPort: 18080, containerPort: 80, protocol: 'tcp' }, { hostPort: 18053, containerPort: 53, protocol: 'udp' }] }, prevResult: br.json,
      };
    } else if (FLANNEL_TYPES.includes(plugin)) {
      conf = {
        cniVersion: '1.0.0', name: NET, type: plugin, subnetFile: join(flannelDir, 'subnet.env'), dataDir: join(flannelDir, 'delegates'),
        delegate: { bridge: 'cnifl0', isDefaultGateway: true, hairpinMode: true }, ipam: { dataDir },
      };
    } else if (plugin === 'host-local') {
      conf = { cniVersion: '1.0.0', name: NET, type: 'host-local', ipam: { type: 'host-local', ranges: [[{ subnet: '10.95.0.0/24' }]], dataDir } };
    } else {
      conf = { cniVersion: '1.0.0', name: NET, type: 'loopback' };
      ifName = 'lo';
    }
    if (plugin !== 'bridge') {
      const add = await run(plugin, 'ADD', id, pod.path, JSON.stringify(conf), ifName);
      if (add.code !== 0) return `${plugin} ADD failed: ${add.stdout}`;
      if (plugin === 'portmap') conf['prevResult'] = add.json;
    }
    const mutated = m.conf === undefined ? conf : m.conf(conf);
    const netns = m.noNetns === true ? undefined : m.bogusNetns === true ? `/run/netns/gone-${id}` : pod.path;
    const del = await run(plugin, 'DEL', id, netns, typeof mutated === 'string' ? mutated : JSON.stringify(mutated), ifName);
    if (plugin === 'portmap') await run('bridge', 'DEL', id, pod.path, JSON.stringify(bridgeConf()));
    const problems: string[] = [];
    if (del.code !== 0) problems.push(`DEL exit ${String(del.code)}: ${del.stdout.trim()}`);
    problems.push(...(await leftovers(id)));
    if (FLANNEL_TYPES.includes(plugin)) {
      const stored = (() => { try { return readdirSync(join(flannelDir, 'delegates')); } catch { return []; } })();
      if (stored.includes(id)) problems.push('stored delegate config');
    }
    if (plugin === 'loopback' && netns === pod.path) {
      const lo = await ipJson<Array<{ flags?: string[] }>>(pod, ['link', 'show', 'lo']);
      if (lo[0]?.flags?.includes('UP') === true) problems.push('lo still up');
    }
    if (problems.length === 0) return undefined;
    // Leave nothing for the next case, whatever happened.
    if (plugin !== 'loopback') await run(plugin, 'DEL', id, pod.path, JSON.stringify(conf), ifName);
    if (plugin === 'portmap' || plugin === 'bridge') await run('bridge', 'DEL', id, pod.path, JSON.stringify(bridgeConf()));
    return problems.join('; ');
  } finally {
    await pod.destroy();
  }
}

describe('DEL never blocks cleanup', rootOnly(), () => {
  before(async () => {
    node = await createTestNetns('weft-delnode');
    dataDir = mkdtempSync(join(tmpdir(), 'weft-del-'));
    flannelDir = mkdtempSync(join(tmpdir(), 'weft-delfl-'));
    writeFileSync(join(flannelDir, 'subnet.env'), 'FLANNEL_NETWORK=10.96.0.0/16\nFLANNEL_SUBNET=10.96.5.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=false\n');
    // flannel-udp needs weftd's TUN device up; a persistent one stands in for it.
    await node.exec(['ip', 'tuntap', 'add', 'flannel0', 'mode', 'tun']);
    await node.exec(['ip', 'link', 'set', 'flannel0', 'up']);
  });
  after(async () => {
    await node.destroy();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(flannelDir, { recursive: true, force: true });
  });

  for (const plugin of ['bridge', 'host-local', 'portmap', 'loopback', ...FLANNEL_TYPES]) {
    test(`${plugin}: ADD, then DEL with each key mutated: exit 0, nothing left`, { timeout: 300_000 }, async (t) => {
      const mutations = [...COMMON, ...(PER_PLUGIN[plugin] ?? [])];
      const failures: string[] = [];
      for (const m of mutations) {
        const bad = await exercise(plugin, m);
        if (bad !== undefined) failures.push(`${m.name}: ${bad}`);
      }
      t.diagnostic(`${plugin}: ${mutations.length} mutations, ${mutations.length - failures.length} clean`);
      assert.deepEqual(failures, []);
    });
  }
});
