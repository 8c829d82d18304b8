// Harness for the reliability tests (issue 10): a node namespace with pod namespaces made by the test,
// the built plugins run inside the node (`ip netns exec`), optionally SIGKILLed after a delay, and
// probes of what an attachment left behind (veth, pod interface/addresses/routes, IPAM files, nft
// set elements). Nothing here touches the root namespace.
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestNetns, ipJson, type TestNetns, inNetns, run } from '../../../testkit/netns.ts';
import { privateBinDir } from '../../fuzz/private-bin.ts';
import { hostVethName } from '../../../lib/attach/bridge-veth.ts';

export const ROOT = join(import.meta.dirname, '..', '..', '..');
/** A private copy of dist/bin, so a concurrent rebuild cannot break a plugin mid-test. */
export const DIST_BIN = privateBinDir();

/** One plugin run: exit code (null when killed), the signal, stdout. */
export interface PluginRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  ms: number;
}

/** CNI_* of one run. */
export interface Invocation {
  command: 'ADD' | 'DEL' | 'CHECK' | 'GC';
  containerId?: string;
  netns?: string;
  ifName?: string;
  /** SIGKILL the plugin this many ms after spawn. */
  killAfterMs?: number;
}

/** Runs dist/bin/<plugin> in `node` with `conf` on stdin. */
export async function runPlugin(node: TestNetns, plugin: string, inv: Invocation, conf: unknown): Promise<PluginRun> {
  const env: NodeJS.ProcessEnv = { PATH: process.env['PATH'], CNI_COMMAND: inv.command, CNI_PATH: DIST_BIN };
  if (inv.containerId !== undefined) env['CNI_CONTAINERID'] = inv.containerId;
  if (inv.netns !== undefined && inv.netns !== '') env['CNI_NETNS'] = inv.netns;
  if (inv.command !== 'GC') env['CNI_IFNAME'] = inv.ifName ?? 'eth0';
  // `ip netns exec` execs the plugin in place (no fork), so SIGKILL reaches the plugin itself.
  const r = await run(inNetns(node.name, [join(DIST_BIN, plugin)]), { env, input: JSON.stringify(conf), ...(inv.killAfterMs !== undefined ? { killAfterMs: inv.killAfterMs } : {}) });
  return { code: r.signal === null ? r.code : null, signal: r.signal, stdout: r.stdout, ms: r.ms };
}

/** A node namespace (lo up) and `pods` pod namespaces, plus a temp dir for IPAM. */
export async function makeLab(pods: number, tag: string): Promise<{ node: TestNetns; pods: TestNetns[]; dir: string; destroy(): Promise<void> }> {
  const node = await createTestNetns('weft-t-rel');
  await node.exec(['ip', 'link', 'set', 'lo', 'up']);
  const list: TestNetns[] = [];
  for (let i = 0; i < pods; i++) list.push(await createTestNetns('weft-t-relp'));
  const dir = mkdtempSync(join(tmpdir(), `weft-rel-${tag}-`));
  return {
    node, pods: list, dir,
    destroy: async () => {
      for (const p of list) await p.destroy();
      await node.destroy();
    },
  };
}

interface Link { ifname: string; ifalias?: string; master?: string; linkinfo?: { info_kind?: string } }

/**
 * Host veths in `node`, or those of one attachment of network `network`: by name (bridge names them
 * `w<hash(network)><hash(<id>/eth0)>`) or by alias (`weft:<id>/eth0`).
 */
export async function hostVeths(node: TestNetns, containerId?: string, network = 'relnet'): Promise<string[]> {
  const links = await ipJson<Link[]>(node, ['-d', 'link', 'show']);
  const name = containerId === undefined ? undefined : hostVethName(network, containerId, 'eth0');
  return links
    .filter((l) => l.linkinfo?.info_kind === 'veth' && (containerId === undefined || l.ifname === name || l.ifalias === `weft:${containerId}/eth0`))
    .map((l) => l.ifname);
}

/** Host veths in `node` described as `name(alias=..., master=...)`, for leftover reports. */
export async function describeVeths(node: TestNetns): Promise<string[]> {
  const links = await ipJson<Link[]>(node, ['-d', 'link', 'show']);
  return links.filter((l) => l.linkinfo?.info_kind === 'veth').map((l) => `${l.ifname}(alias=${l.ifalias ?? '-'}, master=${l.master ?? '-'})`);
}

/** What the pod side holds: whether eth0 exists, its global addresses, and its non-connected routes. */
export async function podState(pod: TestNetns): Promise<{ link: boolean; addrs: string[]; routes: string[] }> {
  const links = await ipJson<Link[]>(pod, ['link', 'show']);
  if (!links.some((l) => l.ifname === 'eth0')) return { link: false, addrs: [], routes: [] };
  const a = await ipJson<Array<{ addr_info?: Array<{ local: string; prefixlen: number; scope?: string }> }>>(pod, ['addr', 'show', 'dev', 'eth0']);
  const addrs = a.flatMap((x) => (x.addr_info ?? []).filter((i) => i.scope !== 'link').map((i) => `${i.local}/${i.prefixlen}`));
  const r = await ipJson<Array<{ dst: string; gateway?: string }>>(pod, ['route', 'show']);
  return { link: true, addrs, routes: r.filter((x) => x.gateway !== undefined).map((x) => `${x.dst} via ${x.gateway}`) };
}

/** host-local reservations of `network` under `dir`: ip -> containerID. */
export function reservations(dir: string, network: string): Map<string, string> {
  const out = new Map<string, string>();
  const d = join(dir, network);
  if (!existsSync(d)) return out;
  for (const f of readdirSync(d)) {
    if (!/^[0-9a-f.:]+$/.test(f) || !/[.:]/.test(f)) continue;
    out.set(f, readFileSync(join(d, f), 'utf8').split('\r\n')[0] ?? '');
  }
  return out;
}

/**
 * Per-attachment nft elements in `node`, as `<set> <element JSON>` (comments included): every element of
 * a set or map whose name matches `sets` (default: bridge's pod sets; its subnet sets are per network).
 */
export async function nftElements(node: TestNetns, sets: RegExp = /^bridge-pods/): Promise<string[]> {
  const r = await node.exec(['nft', '-j', 'list', 'ruleset']);
  if (r.code !== 0) throw new Error(`nft list ruleset: ${r.stderr}`);
  const doc = JSON.parse(r.stdout) as { nftables: Array<Record<string, { name?: string; elem?: unknown[] }>> };
  const out: string[] = [];
  for (const item of doc.nftables) {
    for (const k of ['set', 'map']) {
      const s = item[k];
      if (s === undefined || !sets.test(s.name ?? '')) continue;
      for (const e of s.elem ?? []) out.push(`${s.name ?? ''} ${JSON.stringify(e)}`);
    }
  }
  return out;
}

/** A bridge + host-local config for the reliability tests. */
export function bridgeConf(dir: string, o: { name?: string; cniVersion?: string; subnet?: string } = {}): Record<string, unknown> {
  return {
    cniVersion: o.cniVersion ?? '1.0.0', name: o.name ?? 'relnet', type: 'bridge', bridge: 'relbr0', isGateway: true, ipMasq: true,
    ipam: { type: 'host-local', ranges: [[{ subnet: o.subnet ?? '10.61.0.0/16' }]], routes: [{ dst: '0.0.0.0/0' }], dataDir: dir },
  };
}
