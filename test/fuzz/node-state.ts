// The observable state of a node namespace (links, addresses, routes, nftables) and of data dirs,
// reduced to comparable lines, and the diff between two snapshots. Bridges a successful ADD creates
// stay by design (reference-notes: "The bridge is never removed"), so links of kind bridge, and
// addresses and routes on them, are kept apart as "infrastructure" that may only grow; so are nft
// tables, chains, rules and set definitions. Everything per attachment must return exactly.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { run, inNetns } from '../../testkit/netns.ts';

/** A snapshot: per-attachment lines (must match exactly) and infrastructure lines (may only grow). */
export interface NodeState {
  exact: string[];
  infra: string[];
}

interface IpLink { ifname: string; flags?: string[]; mtu?: number; master?: string; link_type?: string; linkinfo?: { info_kind?: string } }
interface IpAddr { ifname: string; addr_info?: Array<{ local: string; prefixlen: number; scope?: string }> }
interface IpRoute { dst: string; dev?: string; gateway?: string; table?: string; protocol?: string; type?: string }

async function ipJ<T>(ns: string, args: string[]): Promise<T> {
  const r = await run(['ip', '-n', ns, '-j', ...args]);
  if (r.code !== 0) throw new Error(`ip -n ${ns} -j ${args.join(' ')}: ${r.stderr.trim()}`);
  return (r.stdout.trim() === '' ? [] : JSON.parse(r.stdout)) as T;
}

/** Links, addresses and routes of `ns`, with lines for bridges and their addresses/routes set apart. */
async function netState(ns: string, tag: string, out: NodeState): Promise<void> {
  const links = await ipJ<IpLink[]>(ns, ['-d', 'link', 'show']);
  const bridges = new Set(links.filter((l) => l.linkinfo?.info_kind === 'bridge').map((l) => l.ifname));
  for (const l of links) {
    const line = `${tag} link ${l.ifname} kind=${l.linkinfo?.info_kind ?? l.link_type ?? '?'} master=${l.master ?? '-'} up=${l.flags?.includes('UP') === true}`;
    (bridges.has(l.ifname) ? out.infra : out.exact).push(line);
  }
  for (const a of await ipJ<IpAddr[]>(ns, ['addr', 'show'])) {
    for (const ai of a.addr_info ?? []) {
      // Link-local IPv6 addresses come and go with their link (already compared above).
      if (ai.scope === 'link' && ai.local.startsWith('fe80:')) continue;
      (bridges.has(a.ifname) ? out.infra : out.exact).push(`${tag} addr ${a.ifname} ${ai.local}/${ai.prefixlen}`);
    }
  }
  for (const fam of ['-4', '-6']) {
    for (const r of await ipJ<IpRoute[]>(ns, [fam, 'route', 'show', 'table', 'all'])) {
      if (r.dst.startsWith('fe80:') || r.dst === 'ff00::/8' || r.dst.startsWith('multicast')) continue;
      const line = `${tag} route ${r.type ?? ''} ${r.dst} dev=${r.dev ?? '-'} via=${r.gateway ?? '-'} table=${r.table ?? 'main'} proto=${r.protocol ?? '-'}`;
      (r.dev !== undefined && bridges.has(r.dev) ? out.infra : out.exact).push(line);
    }
  }
}

/** nft objects of `ns`: set/map elements are per attachment; the rest is infrastructure. */
async function nftState(ns: string, out: NodeState): Promise<void> {
  const r = await run(inNetns(ns, ['nft', '-j', 'list', 'ruleset']));
  if (r.code !== 0) throw new Error(`nft list ruleset in ${ns}: ${r.stderr.trim()}`);
  const doc = JSON.parse(r.stdout) as { nftables: Array<Record<string, Record<string, unknown>>> };
  for (const item of doc.nftables) {
    const [kind, body] = Object.entries(item)[0] ?? [];
    if (kind === undefined || body === undefined || kind === 'metainfo') continue;
    const where = `${String(body['family'])} ${String(body['table'] ?? body['name'])}`;
    if (kind === 'set' || kind === 'map') {
      out.infra.push(`nft ${kind} ${where} ${String(body['name'])}`);
      // bridge-nets4/6 and -exempt4/6 hold each network's pod subnet and exempt networks, firewall's
      // isolation sets its bridges: per network (they stay for the network's next pod).
      const perNetwork = /-(nets|exempt)[46]-|^fw-(isolated|same|self-drop)$/.test(String(body['name']));
      for (const e of (body['elem'] as unknown[] | undefined) ?? []) (perNetwork ? out.infra : out.exact).push(`nft elem ${where} ${String(body['name'])} ${JSON.stringify(e)}`);
    } else {
      const { handle: _h, ...rest } = body;
      out.infra.push(`nft ${kind} ${JSON.stringify(rest)}`);
    }
  }
}

/** A file's content for comparison; host-local's holder index cache compares by its holders only (its token changes). */
function fileContent(p: string): string {
  const text = readFileSync(p, 'utf8');
  if (p.includes('/.weft-index/')) {
    try {
      return JSON.stringify((JSON.parse(text) as { holders?: unknown }).holders ?? null);
    } catch {
      // not JSON: compare the raw text
    }
  }
  return JSON.stringify(text.slice(0, 200));
}

/** Files under `dir` with their content, except host-local's lock and round-robin cursor files. */
function dirState(dir: string, tag: string, out: NodeState): void {
  const walk = (d: string): void => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const n of names) {
      const p = join(d, n);
      const st = statSync(p, { throwIfNoEntry: false });
      if (st === undefined) continue;
      if (st.isDirectory()) walk(p);
      else if (n === 'lock' || n.startsWith('last_reserved_ip.')) continue;
      else out.exact.push(`${tag} file ${relative(dir, p)} ${fileContent(p)}`);
    }
  };
  walk(dir);
}

/** Snapshot of the node namespace, pod namespaces and directories. */
export async function snapshotNode(node: string, pods: readonly string[], dirs: readonly string[]): Promise<NodeState> {
  const out: NodeState = { exact: [], infra: [] };
  await netState(node, 'node', out);
  await nftState(node, out);
  for (const p of pods) await netState(p, `pod ${p}`, out);
  dirs.forEach((d, i) => dirState(d, `dir${i}`, out));
  out.exact.sort();
  out.infra.sort();
  return out;
}

/** Human-readable differences (empty when `after` is `before` plus only allowed infrastructure growth). */
export function diffNode(before: NodeState, after: NodeState): string[] {
  const diff: string[] = [];
  const a = new Set(after.exact);
  const b = new Set(before.exact);
  for (const l of before.exact) if (!a.has(l)) diff.push(`- ${l}`);
  for (const l of after.exact) if (!b.has(l)) diff.push(`+ ${l}`);
  const ai = new Set(after.infra);
  const moved = movedBridges(before.infra, after.infra);
  for (const l of before.infra) if (!ai.has(l) && !isMoveOf(l, moved)) diff.push(`- (infra) ${l}`);
  return diff;
}

// A successful ADD may move a bridge's gateway to the node's new subnet when no pod is left on the
// old one (plugins/bridge/subnet-move.ts): the old address and its kernel routes go, a new address
// comes. A bridge left with no address at all is still a difference.
const ADDR_LINE = /^(\S+) addr (\S+) (\S+)$/;

/** Bridges that lost an address line but still have one afterwards. */
function movedBridges(before: readonly string[], after: readonly string[]): Set<string> {
  const addrsAfter = new Set(after.map((l) => ADDR_LINE.exec(l)?.[2]).filter((x): x is string => x !== undefined));
  const afterSet = new Set(after);
  const out = new Set<string>();
  for (const l of before) {
    const m = ADDR_LINE.exec(l);
    if (m?.[2] !== undefined && !afterSet.has(l) && addrsAfter.has(m[2])) out.add(m[2]);
  }
  return out;
}

/** An address line of a moved bridge, or a kernel route through it. */
function isMoveOf(line: string, moved: ReadonlySet<string>): boolean {
  const m = ADDR_LINE.exec(line);
  if (m?.[2] !== undefined) return moved.has(m[2]);
  const dev = / dev=(\S+) /.exec(line)?.[1];
  return dev !== undefined && moved.has(dev) && line.includes('proto=kernel');
}
