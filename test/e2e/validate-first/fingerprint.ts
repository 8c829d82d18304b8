// A text fingerprint of everything a plugin could change on a simulated node: the node's and the pod's
// links, addresses, routes, qdiscs and network sysctls, the node's nft ruleset and iptables rulesets,
// and the files (names, sizes, contents) under the test's data dirs. Two equal fingerprints mean "no change".
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { nsRun } from '../../../testkit/topology.ts';

// Volatile parts dropped: address lifetimes and DAD flags, link statistics are not printed (-o without -s).
const NETNS_SCRIPT = `
set +e
ip -d -o link show | sed -E 's/ (link-netnsid|numrxqueues|numtxqueues|gso_max_size|gso_max_segs|gro_max_size|gso_ipv4_max_size|gro_ipv4_max_size|tso_max_size|tso_max_segs) [0-9]+//g; s/ (hello_timer|tcn_timer|topology_change_timer|gc_timer|hold_timer|message_age_timer|forward_delay_timer) +[0-9.]+//g'
ip -o addr show | sed -E 's/ (tentative|dadfailed)//g; s/valid_lft.*//'
ip -4 route show table all
ip -6 route show table all | grep -v '^multicast\\|^local fe80\\|proto kernel metric 256 pref medium$\\|^fe80::/64'
tc qdisc show
tc filter show dev lo 2>/dev/null
sysctl -a 2>/dev/null | grep -E '^net\\.(ipv4\\.(ip_forward|conf\\.)|ipv6\\.conf\\.|core\\.)' | grep -v -E 'stable_secret|\\.(base_reachable_time|mc_forwarding)'
if [ "$1" = node ]; then nft list ruleset; iptables-save 2>/dev/null | grep -v '^#'; ip6tables-save 2>/dev/null | grep -v '^#'; fi
true
`;

/** Files under `dir`, recursively: path, size and content (small files only, which all of ours are). */
export function treeFingerprint(dir: string): string {
  const out: string[] = [];
  const walk = (d: string, rel: string): void => {
    let names: string[];
    try {
      names = readdirSync(d).sort();
    } catch {
      return;
    }
    for (const n of names) {
      const p = join(d, n);
      const st = statSync(p);
      if (st.isDirectory()) {
        out.push(`${rel}${n}/ mode ${(st.mode & 0o7777).toString(8)}`);
        walk(p, `${rel}${n}/`);
      } else {
        out.push(`${rel}${n} ${st.size} ${st.size < 65536 ? JSON.stringify(readFileSync(p, 'utf8')) : ''}`);
      }
    }
  };
  walk(dir, '');
  return out.join('\n');
}

/** Fingerprint of the node netns, the pod netns and the data dirs. */
export async function fingerprint(nodeNs: string, podNs: string, dirs: readonly string[]): Promise<string> {
  const [node, pod] = await Promise.all([nsRun(nodeNs, ['sh', '-c', NETNS_SCRIPT, 'fp', 'node']), nsRun(podNs, ['sh', '-c', NETNS_SCRIPT, 'fp', 'pod'])]);
  return [`## node\n${node}`, `## pod\n${pod}`, ...dirs.map((d) => `## ${d}\n${treeFingerprint(d)}`)].join('\n');
}

/** The lines present in one fingerprint and not the other, for a readable assertion message. */
export function diffLines(before: string, after: string): string {
  const a = new Set(before.split('\n'));
  const b = new Set(after.split('\n'));
  const changed = [...[...a].filter((l) => !b.has(l)).map((l) => `- ${l}`), ...[...b].filter((l) => !a.has(l)).map((l) => `+ ${l}`)];
  if (changed.length > 0 || before === after) return changed.slice(0, 40).join('\n');
  // Same lines, other order or count: show where they part.
  const x = before.split('\n');
  const y = after.split('\n');
  const i = x.findIndex((l, k) => l !== y[k]);
  return `order/count differs at line ${i}:\n- ${x.slice(i, i + 3).join('\n- ')}\n+ ${y.slice(i, i + 3).join('\n+ ')}`;
}
