// Helpers for the upgrade tests: the two builds side by side, runners that hand an attachment's cached
// result from one build to the other (as a runtime upgraded in place keeps its cache), and the
// leftovers of a bridge + host-local + portmap attachment in a node namespace.
import { join } from 'node:path';
import { CniRunner, execPlugin, type Attachment, type ConfList } from '../../../testkit/cni-runner.ts';
import { ipJson, run, type TestNetns, inNetns } from '../../../testkit/netns.ts';
import { DIST_BIN, hostVeths, nftElements, reservations } from '../reliability/harness.ts';
import { previousBinDir } from './previous-build.ts';

/** This build: a private copy of dist/bin, so a concurrent rebuild cannot break a run. */
export const NEW_BIN = DIST_BIN;

/** The previous build's bin dir (built and cached on first use) and this tree's dist/bin. */
export function builds(): { prev: string; next: string } {
  return { prev: previousBinDir(), next: NEW_BIN };
}

/** A runner of `conf` over the plugins in `binDir`, run inside `node`. */
export function runnerOf(conf: ConfList, binDir: string, node: string): CniRunner {
  return new CniRunner(conf, { binDirs: [binDir], nodeNetns: node, timeoutMs: 60_000 });
}

/** GC of every plugin of `conf` by the build in `binDir`, inside `node`, keeping `valid`; throws on failure. */
export async function gcAll(conf: ConfList, binDir: string, node: string, valid: Attachment[]): Promise<void> {
  for (const p of conf.plugins) {
    const stdin = JSON.stringify({ ...p, cniVersion: conf.cniVersion, name: conf.name, 'cni.dev/valid-attachments': valid.map((a) => ({ containerID: a.containerId, ifname: a.ifName })) });
    const r = await execPlugin(join(binDir, p.type), { CNI_COMMAND: 'GC', CNI_PATH: binDir }, stdin, { binDirs: [binDir], nodeNetns: node });
    if (r.code !== 0) throw new Error(`GC ${p.type} (${binDir}) failed: ${r.stdout}${r.stderr}`);
  }
}

/** Hands `a`'s cached ADD result from runner `from` to runner `to`. */
export function handOver(from: CniRunner, to: CniRunner, a: Attachment): void {
  const r = from.cached(a);
  if (r === undefined) throw new Error(`no cached result for ${a.containerId}`);
  to.adopt(a, r);
}

/** A namespace someone else owns (a simulated cluster's node) seen as a TestNetns whose destroy() does nothing. */
export function borrowNetns(name: string): TestNetns {
  return { name, path: `/run/netns/${name}`, exec: (cmd) => run(inNetns(name, [...cmd])), destroy: () => Promise.resolve() };
}

/** The pod's eth0 addresses (global scope) as `ip/prefix`; [] when it has no eth0. */
export async function podAddrs(pod: string): Promise<string[]> {
  const links = await ipJson<Array<{ ifname: string }>>(pod, ['link', 'show']);
  if (!links.some((l) => l.ifname === 'eth0')) return [];
  const a = await ipJson<Array<{ addr_info?: Array<{ local: string; prefixlen: number; scope?: string }> }>>(pod, ['addr', 'show', 'dev', 'eth0']);
  return a.flatMap((x) => (x.addr_info ?? []).filter((i) => i.scope === 'global').map((i) => `${i.local}/${i.prefixlen}`));
}

/** One ping from namespace `from` to `ip`. */
export async function ping(from: string, ip: string): Promise<boolean> {
  return (await run(inNetns(from, ['ping', '-c', '1', '-W', '2', ip]))).code === 0;
}

/** What a bridge + host-local + portmap network left in `node` and `dataDir`, one line per leftover. */
export async function leftovers(node: TestNetns, network: string, dataDir: string, pods: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const [ip, id] of reservations(dataDir, network)) out.push(`IPAM ${ip} held by ${id}`);
  for (const v of await hostVeths(node)) out.push(`host veth ${v}`);
  for (const e of await nftElements(node, /^(bridge-pods|portmap)/)) out.push(`nft element ${e}`);
  for (const p of pods) for (const a of await podAddrs(p)) out.push(`pod ${p} still has ${a}`);
  return out;
}
