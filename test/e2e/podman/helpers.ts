// Kernel-state probes shared by the podman end-to-end tests; all read namespaces from outside.
import { spawnCollect } from '../../../testkit/podman.ts';
import { inNetns, inNetnsPath } from '../../../testkit/netns.ts';

/** Parsed `ip -j <args>` run in the network namespace at `nsPath` (a podman sandbox or /var/run/netns/<name>). */
export async function nsJson<T>(nsPath: string, args: string[]): Promise<T> {
  const r = await spawnCollect(inNetnsPath(nsPath, ['ip', '-j', ...args]), process.env, 10_000);
  if (r.code !== 0) throw new Error(`ip -j ${args.join(' ')} in ${nsPath} failed (${r.code}): ${r.stderr.trim()}`);
  const text = r.stdout.trim();
  return (text === '' ? [] : JSON.parse(text)) as T;
}

/** One element of a set or map in weft's nftables table. */
export interface NftElement {
  set: string;
  elem: unknown;
}

/** Every set/map element of `table inet weft` in namespace `netns` (by name); [] when the table is absent. */
export async function podElements(netns: string): Promise<NftElement[]> {
  const r = await spawnCollect(inNetns(netns, ['nft', '-j', 'list', 'table', 'inet', 'weft']), process.env, 10_000);
  if (r.code !== 0) {
    if (/No such file or directory/.test(r.stderr)) return [];
    throw new Error(`nft list table inet weft in ${netns} failed: ${r.stderr.trim()}`);
  }
  const doc = JSON.parse(r.stdout) as { nftables: Array<Record<string, { name?: string; elem?: unknown[] }>> };
  const out: NftElement[] = [];
  for (const item of doc.nftables) {
    const s = item['set'] ?? item['map'];
    if (s?.elem === undefined) continue;
    for (const e of s.elem) out.push({ set: s.name ?? '?', elem: e });
  }
  return out;
}

/** Polls `pred` until true; throws naming `what` after `timeoutMs`. */
export async function waitUntil(what: string, pred: () => Promise<boolean>, timeoutMs: number, everyMs = 200): Promise<void> {
  const t0 = Date.now();
  while (!(await pred())) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
