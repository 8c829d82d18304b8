// Counts of everything a node namespace and the plugins' files can accumulate (links, addresses, routes,
// nft objects and set/map elements, IPAM files, addon/code-cache files of our bundles, processes left in
// the namespace, fds on our files), so a soak can compare the node before and after thousands of cycles.
// Counts objects, never handle numbers: nft handles grow monotonically by design.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseCommentedBody } from '../../lib/sys/code-cache.ts';
import { ipJson, run, type TestNetns } from '../../testkit/netns.ts';

/** Named counts; two censuses compare key by key. */
export type Census = Record<string, number>;

/** Every file under `dir` (recursive), relative; [] when it does not exist. */
export function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (d: string, rel: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name), join(rel, e.name));
      else out.push(join(rel, e.name));
    }
  };
  walk(dir, '');
  return out.sort();
}

/** The 16-hex prefix of the body sha256 of each bundle in `binDir` (what lib/sys/code-cache.ts names its files by). */
export function bundleHashes(binDir: string, names: string[]): string[] {
  return names.map((n) => {
    const body = parseCommentedBody(readFileSync(join(binDir, n), 'utf8'));
    return body === null ? '' : createHash('sha256').update(body).digest('hex').slice(0, 16);
  }).filter((h) => h !== '');
}

// A code cache, the mark a first run leaves instead of one (lib/sys/code-cache.ts), or an addon.
const FINAL_NAME = /^(weft-cc-[a-z0-9-]+-[0-9a-f]{16}-v[0-9.]+-[a-z0-9]+-[A-Za-z]+\.bin(\.seen)?|weft_sys-[0-9a-f]{16}\.node)$/;

/**
 * Files of /run/weft that are neither a code cache (or its mark) nor an addon under its final name, except the temp
 * files of processes still running (lib/fs/atomic-write.ts names them `<name>.tmp-<pid>-...`): what a
 * killed or buggy writer leaves behind. The final names are bounded (one per bundle build, Node version
 * and CNI command), and the directory is shared with every other weft build on the machine, so their
 * count is reported, not compared.
 */
export function strayRunWeftFiles(): string[] {
  return filesUnder('/run/weft').filter((f) => {
    if (FINAL_NAME.test(f)) return false;
    const pid = /\.tmp-(\d+)-/.exec(f)?.[1];
    return pid === undefined || !existsSync(`/proc/${pid}`);
  });
}

/** Code-cache files of /run/weft that belong to bundles with these body hashes. */
export function codeCachesOf(hashes: string[]): string[] {
  return filesUnder('/run/weft').filter((f) => hashes.some((h) => f.includes(`-${h}-`)));
}

/** Processes whose fds point into one of `dirs` (by /proc/<pid>/fd link target), as `pid:target`. */
export function fdsInto(dirs: string[]): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    let fds: string[];
    try { fds = readdirSync(`/proc/${pid}/fd`); } catch { continue; }
    for (const fd of fds) {
      try {
        const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
        if (dirs.some((d) => target.startsWith(d))) out.push(`${pid}:${target}`);
      } catch { /* closed meanwhile */ }
    }
  }
  return out;
}

/** Open fds of the current process. */
export function ownFdCount(): number {
  return readdirSync('/proc/self/fd').length;
}

interface NftItem { [kind: string]: { name?: string; elem?: unknown[] } | undefined }

/** Counts nft objects in `node` by kind (table, chain, rule, set, map, ...) and set/map elements. */
export async function nftCensus(node: TestNetns): Promise<Census> {
  const r = await node.exec(['nft', '-j', 'list', 'ruleset']);
  if (r.code !== 0) throw new Error(`nft list ruleset: ${r.stderr}`);
  const doc = JSON.parse(r.stdout) as { nftables: NftItem[] };
  const c: Census = {};
  for (const item of doc.nftables) {
    for (const [kind, v] of Object.entries(item)) {
      if (kind === 'metainfo') continue;
      c[`nft ${kind}s`] = (c[`nft ${kind}s`] ?? 0) + 1;
      if ((kind === 'set' || kind === 'map') && v !== undefined) c['nft elements'] = (c['nft elements'] ?? 0) + (v.elem?.length ?? 0);
    }
  }
  c['nft elements'] ??= 0;
  return c;
}

/** The node's kernel state and the given data dirs as counts. */
export async function nodeCensus(node: TestNetns, dataDirs: string[]): Promise<Census> {
  const links = await ipJson<unknown[]>(node, ['link', 'show']);
  const addrs = await ipJson<Array<{ addr_info?: unknown[] }>>(node, ['addr', 'show']);
  const routes4 = await ipJson<unknown[]>(node, ['-4', 'route', 'show', 'table', 'all']);
  const routes6 = await ipJson<unknown[]>(node, ['-6', 'route', 'show', 'table', 'all']);
  const neigh = await ipJson<unknown[]>(node, ['neigh', 'show']);
  const pids = (await run(['ip', 'netns', 'pids', node.name])).stdout.split(/\s+/).filter(Boolean);
  const c: Census = {
    links: links.length,
    addresses: addrs.reduce((n, l) => n + (l.addr_info?.length ?? 0), 0),
    routes: routes4.length + routes6.length,
    neighbours: neigh.length,
    'processes in node': pids.length,
    ...(await nftCensus(node)),
  };
  for (const d of dataDirs) c[`files in ${d}`] = filesUnder(d).length;
  return c;
}

/** Keys whose count grew from `before` to `after`, as `key: before -> after`. */
export function grown(before: Census, after: Census): string[] {
  return Object.keys(after).filter((k) => (after[k] ?? 0) > (before[k] ?? 0)).map((k) => `${k}: ${before[k] ?? 0} -> ${after[k] ?? 0}`);
}

/** Total size in bytes of the files under `dir`. */
export function bytesUnder(dir: string): number {
  return filesUnder(dir).reduce((n, f) => n + statSync(join(dir, f)).size, 0);
}
