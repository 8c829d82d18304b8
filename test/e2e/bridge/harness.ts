// Harness for bridge end-to-end tests: a node namespace (the plugin's host) and pod namespaces made by
// the test; our bridge (dist/bin/bridge, else the tsx entry) or the reference /usr/lib/cni/bridge run
// inside the node through `ip netns exec`. IPAM data dirs are temporary. Nothing touches the root netns.
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestNetns, inNetns, ipJson, run, type TestNetns } from '../../../testkit/netns.ts';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const REFERENCE_DIR = '/usr/lib/cni';
const DIST_DIR = join(ROOT, 'dist', 'bin');

/** How to run one bridge implementation and where its IPAM is found. */
export interface Impl {
  label: 'weft' | 'reference';
  argv: string[];
  cniPath: string;
}

/** Our bridge: the bundle (with our host-local beside it, so IPAM runs in-process), else tsx. */
export function ours(): Impl {
  const bin = join(DIST_DIR, 'bridge');
  if (existsSync(bin)) return { label: 'weft', argv: [bin], cniPath: DIST_DIR };
  return { label: 'weft', argv: [process.execPath, '--import', 'tsx', join(ROOT, 'plugins', 'bridge', 'main.ts')], cniPath: REFERENCE_DIR };
}

/** The reference Go bridge with the reference host-local. */
export const reference: Impl = { label: 'reference', argv: [join(REFERENCE_DIR, 'bridge')], cniPath: REFERENCE_DIR };

/** One plugin run's outcome. */
export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  json: Record<string, unknown> | null;
}

/** CNI_* of one run; netns '' means CNI_NETNS unset. */
export interface Inv {
  command: 'ADD' | 'DEL' | 'CHECK' | 'GC';
  containerId: string;
  netns: string;
  ifName?: string;
  args?: string;
}

/** Runs `impl` inside node namespace `node` with `conf` on stdin. */
export async function runIn(node: TestNetns, impl: Impl, inv: Inv, conf: unknown): Promise<Run> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'], CNI_COMMAND: inv.command, CNI_CONTAINERID: inv.containerId,
    CNI_IFNAME: inv.ifName ?? 'eth0', CNI_PATH: impl.cniPath,
  };
  if (inv.netns !== '') env['CNI_NETNS'] = inv.netns;
  if (inv.args !== undefined) env['CNI_ARGS'] = inv.args;
  const r = await run(inNetns(node.name, impl.argv), { env, cwd: ROOT, input: JSON.stringify(conf) });
  let json: Record<string, unknown> | null;
  try {
    json = r.stdout.trim() ? (JSON.parse(r.stdout) as Record<string, unknown>) : null;
  } catch {
    json = null;
  }
  return { code: r.signal === null ? r.code : null, stdout: r.stdout, stderr: r.stderr, json };
}

/** A bridge config with host-local IPAM on `dataDir`. */
export function bridgeConf(o: { name?: string; cniVersion?: string; dataDir: string; subnet?: string; extra?: Record<string, unknown>; ipam?: Record<string, unknown> }): Record<string, unknown> {
  return {
    cniVersion: o.cniVersion ?? '1.0.0',
    name: o.name ?? 'weftnet',
    type: 'bridge',
    bridge: 'cni0',
    isGateway: true,
    ipMasq: true,
    ...o.extra,
    ipam: { type: 'host-local', subnet: o.subnet ?? '10.88.0.0/24', dataDir: o.dataDir, routes: [{ dst: '0.0.0.0/0' }], ...o.ipam },
  };
}

/** The config with prevResult set (CHECK / DEL as libcni sends them). */
export function withPrev(conf: Record<string, unknown>, prev: unknown): Record<string, unknown> {
  return { ...conf, prevResult: prev };
}

/** A fresh temp dir for host-local. */
export function tempDir(tag: string): string {
  return mkdtempSync(join(tmpdir(), `weft-br-${tag}-`));
}

/** Names of veth links in namespace `ns`. */
export async function veths(ns: TestNetns): Promise<string[]> {
  const links = await ipJson<Array<{ ifname: string; linkinfo?: { info_kind?: string } }>>(ns, ['-d', 'link', 'show']);
  return links.filter((l) => l.linkinfo?.info_kind === 'veth').map((l) => l.ifname);
}

/** `ip -j addr show dev <dev>` local/prefix strings in `ns`. */
export async function addrsOf(ns: TestNetns, dev: string, family: '-4' | '-6' = '-4'): Promise<string[]> {
  const rows = await ipJson<Array<{ addr_info?: Array<{ local: string; prefixlen: number }> }>>(ns, [family, 'addr', 'show', 'dev', dev]);
  return rows.flatMap((r) => (r.addr_info ?? []).map((a) => `${a.local}/${a.prefixlen}`));
}

/** Elements (as text) of every weft bridge pod set in `node`, and the rule count of the weft table. */
export async function nftState(node: TestNetns): Promise<{ elements: string[]; rules: number }> {
  const r = await node.exec(['nft', '-j', 'list', 'table', 'inet', 'weft']);
  if (r.code !== 0) return { elements: [], rules: 0 };
  const doc = JSON.parse(r.stdout) as { nftables: Array<Record<string, { name?: string; elem?: unknown[] }>> };
  const elements: string[] = [];
  let rules = 0;
  for (const item of doc.nftables) {
    if (item['rule'] !== undefined) rules++;
    const set = item['set'];
    if (set?.name?.startsWith('bridge-pods') === true) for (const e of set.elem ?? []) elements.push(JSON.stringify(e));
  }
  return { elements, rules };
}

/** A node namespace plus `n` pod namespaces. */
export async function makeNodes(pods: number): Promise<{ node: TestNetns; pods: TestNetns[] }> {
  const node = await createTestNetns('weft-t');
  const list: TestNetns[] = [];
  for (let i = 0; i < pods; i++) list.push(await createTestNetns('weft-t'));
  return { node, pods: list };
}

/**
 * From inside `ns`, sends one ICMP echo to each target with a raw socket (python3; no ping binary
 * on these machines) and returns the targets that answered within 1 s.
 */
export async function reachable(ns: TestNetns, targets: string[]): Promise<string[]> {
  const script = `
import socket, struct, sys, time
def csum(b):
    s = sum(struct.unpack('!%dH' % (len(b)//2), b)); s = (s >> 16) + (s & 0xffff); s += s >> 16; return ~s & 0xffff
ok = []
for i, t in enumerate(sys.argv[1:]):
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP); s.settimeout(1.0)
    h = struct.pack('!BBHHH', 8, 0, 0, 4242, i) + b'weft'; h = h[:2] + struct.pack('!H', csum(h)) + h[4:]
    s.sendto(h, (t, 0)); end = time.time() + 1.0
    while time.time() < end:
        try: d, a = s.recvfrom(1500)
        except socket.timeout: break
        if a[0] == t and d[20] == 0: ok.append(t); break
print(' '.join(ok))
`;
  const r = await ns.exec(['python3', '-c', script, ...targets]);
  return r.stdout.trim() === '' ? [] : r.stdout.trim().split(' ');
}
