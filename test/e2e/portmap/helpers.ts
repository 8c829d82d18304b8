// Shared pieces of the portmap end-to-end tests: the built binary, one-off plugin runs, HTTP probes, elements.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execPlugin, type ConfList, type PluginRun } from '../../../testkit/cni-runner.ts';
import { nsExec, type Topology } from '../../../testkit/topology.ts';

export const ROOT = join(import.meta.dirname, '..', '..', '..');
export const BIN_DIR = join(ROOT, 'dist', 'bin');

/** Runs dist/bin/portmap once inside `nodeNetns`, as the runner would inside a chain. */
export function runPortmap(nodeNetns: string, o: {
  command: 'ADD' | 'DEL' | 'CHECK'; conf: ConfList; containerId: string; netns: string; prevResult?: unknown; portMappings?: unknown[];
}): Promise<PluginRun> {
  const plugin = o.conf.plugins.find((p) => p.type === 'portmap') ?? { type: 'portmap', capabilities: { portMappings: true } };
  const stdin: Record<string, unknown> = { ...plugin, name: o.conf.name, cniVersion: o.conf.cniVersion };
  if (o.portMappings !== undefined) stdin['runtimeConfig'] = { portMappings: o.portMappings };
  if (o.prevResult !== undefined) stdin['prevResult'] = o.prevResult;
  const env: NodeJS.ProcessEnv = { CNI_COMMAND: o.command, CNI_CONTAINERID: o.containerId, CNI_IFNAME: 'eth0', CNI_PATH: BIN_DIR };
  if (o.netns !== '') env['CNI_NETNS'] = o.netns;
  return execPlugin(join(BIN_DIR, 'portmap'), env, JSON.stringify(stdin), { binDirs: [BIN_DIR], nodeNetns });
}

/** Starts busybox httpd on :80 in `netns`, answering `body`. */
export function serveHttp(topo: Topology, netns: string, body: string): void {
  const www = mkdtempSync(join(topo.dir, 'www-'));
  writeFileSync(join(www, 'index.html'), `${body}\n`);
  topo.spawnIn(netns, ['busybox', 'httpd', '-f', '-p', '80', '-h', www]);
}

/** HTTP GET from a namespace; the body or '' (curl, 2 s). */
export async function fetchFrom(netns: string, host: string, port: number): Promise<string> {
  const r = await nsExec(netns, ['curl', '-s', '--max-time', '2', `http://${host}:${port}/`], { timeoutMs: 5000 });
  return r.code === 0 ? r.stdout.trim() : '';
}

/** Retries fetchFrom until it returns `want` (a server may still be starting); returns the last body. */
export async function fetchUntil(netns: string, host: string, port: number, want: string, timeoutMs = 8000): Promise<string> {
  const t0 = Date.now();
  let last = '';
  while (Date.now() - t0 < timeoutMs) {
    last = await fetchFrom(netns, host, port);
    if (last === want) return last;
    await new Promise((r) => setTimeout(r, 200));
  }
  return last;
}

/** The portmap elements (set name + element JSON) in the node's `inet weft` table. */
export async function portmapElements(nodeNetns: string): Promise<Array<{ set: string; elem: unknown }>> {
  const r = await nsExec(nodeNetns, ['nft', '-j', 'list', 'table', 'inet', 'weft']);
  if (r.code !== 0) return [];
  const doc = JSON.parse(r.stdout) as { nftables: Array<Record<string, { name?: string; elem?: unknown[] }>> };
  const out: Array<{ set: string; elem: unknown }> = [];
  for (const item of doc.nftables) {
    const s = item['set'] ?? item['map'];
    if (s?.name?.startsWith('portmap-') !== true) continue;
    for (const e of s.elem ?? []) out.push({ set: s.name, elem: e });
  }
  return out;
}

/** Number of rules in the node's `inet weft` table. */
export async function ruleCount(nodeNetns: string): Promise<number> {
  const r = await nsExec(nodeNetns, ['nft', '-j', 'list', 'table', 'inet', 'weft']);
  if (r.code !== 0) return 0;
  const doc = JSON.parse(r.stdout) as { nftables: Array<Record<string, unknown>> };
  return doc.nftables.filter((i) => 'rule' in i).length;
}
