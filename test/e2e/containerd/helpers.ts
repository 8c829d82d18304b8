// Probes shared by the containerd end-to-end tests: HTTP through a hostPort, and what a pod leaves
// on its node (address files, veths, nftables elements, libcni's cached result). All read
// namespaces from outside with nsenter.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { containerdMissing, run, type ContainerdEnv } from '../../../testkit/containerd.ts';
import { inNetnsPath } from '../../../testkit/netns.ts';

/**
 * The `skip` option of a containerd suite: a loud skip on a developer's machine without containerd
 * or crictl; false under CI=true, where failIfMissing() then fails the suite instead.
 */
export function skipUnlessCi(): string | false {
  const missing = containerdMissing();
  if (missing === undefined || process.env['CI'] === 'true') return false;
  const msg = `########## SKIPPED containerd e2e: ${missing} ##########`;
  process.stderr.write(`${msg}\n`);
  return msg;
}

/** Throws (so before() fails the suite) when containerd or crictl is missing: CI must never skip. */
export function failIfMissing(): void {
  const missing = containerdMissing();
  if (missing !== undefined) throw new Error(`containerd e2e cannot run: ${missing}`);
}

/** GET `url` with curl inside namespace `nsPath`; the body, or undefined on failure. */
export async function httpGet(nsPath: string, url: string): Promise<string | undefined> {
  const r = await run(inNetnsPath(nsPath, ['curl', '-sS', '--max-time', '2', url]), 10_000);
  return r.code === 0 ? r.stdout : undefined;
}

/** Polls `pred` until true; throws naming `what` after `timeoutMs`. */
export async function waitUntil(what: string, pred: () => Promise<boolean>, timeoutMs = 20_000, everyMs = 200): Promise<void> {
  const t0 = Date.now();
  while (!(await pred())) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Parsed `ip -j <args>` in the namespace at `nsPath`. */
export async function ipJson<T>(nsPath: string, args: string[]): Promise<T> {
  const r = await run(inNetnsPath(nsPath, ['ip', '-j', ...args]), 10_000);
  if (r.code !== 0) throw new Error(`ip -j ${args.join(' ')} in ${nsPath} failed (${r.code}): ${r.stderr.trim()}`);
  const text = r.stdout.trim();
  return (text === '' ? [] : JSON.parse(text)) as T;
}

/** Every set/map element of weft's `inet weft` table in the namespace at `nsPath`, as JSON text per element. */
export async function nftElements(nsPath: string): Promise<string[]> {
  const r = await run(inNetnsPath(nsPath, ['nft', '-j', 'list', 'table', 'inet', 'weft']), 10_000);
  if (r.code !== 0) {
    if (/No such file or directory/.test(r.stderr)) return [];
    throw new Error(`nft list table inet weft in ${nsPath} failed: ${r.stderr.trim()}`);
  }
  const doc = JSON.parse(r.stdout) as { nftables: Array<Record<string, { name?: string; elem?: unknown[] }>> };
  const out: string[] = [];
  for (const item of doc.nftables) {
    const s = item['set'] ?? item['map'];
    for (const e of s?.elem ?? []) out.push(`${s?.name ?? '?'}: ${JSON.stringify(e)}`);
  }
  return out;
}

/** What pods leave on a node: each list is empty on a clean node. */
export interface NodeLeftovers {
  addressFiles: string[];
  veths: string[];
  nftElements: string[];
  cachedResults: string[];
  /** Files in other per-pod data dirs (e.g. the flannel plugin's stored delegates). */
  dataFiles: string[];
}

/** Collects NodeLeftovers for node namespace `nodeNs` (a name under /var/run/netns). */
export async function leftovers(env: ContainerdEnv, nodeNs: string, ipamNetDir: string, dataDirs: string[] = []): Promise<NodeLeftovers> {
  const path = `/var/run/netns/${nodeNs}`;
  const links = await ipJson<Array<{ ifname: string; link_type?: string; linkinfo?: { info_kind?: string } }>>(path, ['-d', 'link', 'show', 'type', 'veth']);
  const files = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir) : []);
  return {
    addressFiles: files(ipamNetDir).filter((f) => /^[0-9a-f.:]+$/.test(f)),
    // The node's uplink to the underlay is the only veth the test topology puts there.
    veths: links.map((l) => l.ifname).filter((n) => n !== 'eth0'),
    // bridge-nets{4,6}-* and bridge-exempt{4,6}-* hold the network's subnet and exempt networks, not a pod's: they stay, like the bridge itself.
    nftElements: (await nftElements(path)).filter((e) => !/^bridge-(nets|exempt)[46]-/.test(e)),
    cachedResults: env.cachedResults(),
    dataFiles: dataDirs.flatMap((d) => files(d).map((f) => join(d, f))),
  };
}

/** The empty NodeLeftovers, for deepEqual. */
export const CLEAN: NodeLeftovers = { addressFiles: [], veths: [], nftElements: [], cachedResults: [], dataFiles: [] };
