// The Service proxies of the side-by-side benchmark and how each one's kernel state is read, in
// its own node namespace: weftd --service-proxy (the built bundle), kube-proxy v1.34.4 in nftables
// and in iptables mode. "Programmed" is seen cheaply: one element looked up (nft get element) or one
// chain listed for a cold start, and `nft monitor` lines carrying a new endpoint's address for a change
// (iptables mode: its endpoint chain polled by name; nft monitor does not show iptables-nft's rules' addresses).
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Cluster, ClusterNode } from '../../testkit/cluster.ts';
import { kubeProxyArgv, stopKubeProxy } from '../../testkit/kube-proxy.ts';
import { nsExec } from '../../testkit/topology.ts';

/** The peers, in the order they run. */
export type PeerName = 'weft' | 'kube-proxy-nftables' | 'kube-proxy-iptables';
export const PEERS: readonly PeerName[] = ['weft', 'kube-proxy-nftables', 'kube-proxy-iptables'];

/** A running peer: its process (the pid /proc is read for) and how to stop it and clear its rules. */
export interface RunningPeer {
  proc: ChildProcess;
  stop(): Promise<void>;
}

/** Starts `peer` on node `n` from cold (its rules cleared first). Runs in the node's namespace. */
export async function startPeer(c: Cluster, n: ClusterNode, peer: PeerName): Promise<RunningPeer> {
  await clearRules(n, peer);
  if (peer === 'weft') {
    const proc = c.topo.spawnIn(n.netns, [...c.weftdArgv(n), '--service-proxy'], join(n.dir, 'weftd-svc.log'));
    return { proc, stop: async () => { await stopProc(proc); await clearRules(n, peer); } };
  }
  const mode = peer === 'kube-proxy-nftables' ? 'nftables' : 'iptables';
  // minSyncPeriod left at its default (1 s), as a cluster runs it.
  const proc = c.topo.spawnIn(n.netns, kubeProxyArgv(n, mode, c.kube!.kubeconfig, '10.244.0.0/16'), join(n.dir, `kube-proxy-${mode}.log`));
  return { proc, stop: async () => { await stopKubeProxy(proc); await clearRules(n, peer); } };
}

async function stopProc(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null) return;
  const closed = new Promise((res) => p.once('close', res));
  p.kill('SIGTERM');
  await closed;
}

/** Removes what the peer programs (only it writes netfilter state in its node namespace: weftd's lease part is stopped there). */
async function clearRules(n: ClusterNode, peer: PeerName): Promise<void> {
  if (peer === 'weft') await nsExec(n.netns, ['nft', 'delete', 'table', 'inet', 'weft-svc']);
  else await nsExec(n.netns, ['nft', 'flush', 'ruleset']);
}

/** True once `clusterIP`:80/tcp is in the peer's kernel state (one element, or one chain for iptables). */
export async function serviceProgrammed(n: ClusterNode, peer: PeerName, clusterIP: string): Promise<boolean> {
  if (peer === 'kube-proxy-iptables') {
    const r = await nsExec(n.netns, ['iptables', '-w', '-t', 'nat', '-S', 'KUBE-SERVICES'], { timeoutMs: 120_000 });
    return r.code === 0 && r.stdout.includes(`-d ${clusterIP}/32 `);
  }
  const [family, table, map] = peer === 'weft' ? ['inet', 'weft-svc', 'svc4'] : ['ip', 'kube-proxy', 'service-ips'];
  const r = await nsExec(n.netns, ['nft', 'get', 'element', family, table, map, `{ ${clusterIP} . tcp . 80 }`], { timeoutMs: 120_000 });
  return r.code === 0;
}

/** Rules and set/map elements of the peer's tables (weft: inet weft-svc; kube-proxy: the namespace's whole ruleset). */
export async function ruleCounts(n: ClusterNode, peer: PeerName): Promise<{ rules: number; elements: number }> {
  const argv = peer === 'weft' ? ['nft', '-j', 'list', 'table', 'inet', 'weft-svc'] : ['nft', '-j', 'list', 'ruleset'];
  const r = await nsExec(n.netns, argv, { timeoutMs: 600_000 });
  const json = JSON.parse(r.stdout || '{"nftables":[]}') as { nftables: Array<{ rule?: unknown; map?: { elem?: unknown[] }; set?: { elem?: unknown[] } }> };
  const elements = json.nftables.reduce((k, x) => k + ((x.map ?? x.set)?.elem?.length ?? 0), 0);
  return { rules: json.nftables.filter((x) => x.rule !== undefined).length, elements };
}

/** `nft monitor` in a node namespace: resolves waiters when a line carries their address. */
export interface AddressMonitor {
  /** Wall ms at which `ip` first appears in a netfilter event from now on (rejects after timeoutMs). */
  next(ip: string, timeoutMs: number): Promise<number>;
  close(): void;
}

/** How long `nft monitor` may take to show its first event (it reads the whole ruleset first: seconds at 10,000 Services on a busy node). */
const MONITOR_READY_MS = 120_000;

/**
 * Starts `nft monitor` (ruleset events: tables, chains, rules, elements) in `n`'s namespace and
 * resolves once it is certainly listening: a probe table is added and deleted (every 500 ms) until
 * the monitor prints its event, so no change made after this can be missed for a slow start.
 */
export async function monitorAddresses(c: Cluster, n: ClusterNode): Promise<AddressMonitor> {
  const p = c.topo.spawnIn(n.netns, ['nft', 'monitor']);
  const waiters = new Map<string, (t: number) => void>();
  const probe = `wbench-mon-${process.pid}`;
  let ready = false;
  createInterface({ input: p.stdout! }).on('line', (line) => {
    const t = performance.timeOrigin + performance.now();
    if (!ready && line.includes(probe)) ready = true;
    if (waiters.size === 0) return;
    for (const m of line.matchAll(/\d+\.\d+\.\d+\.\d+/g)) {
      const w = waiters.get(m[0]);
      if (w !== undefined) { waiters.delete(m[0]); w(t); }
    }
  });
  const end = Date.now() + MONITOR_READY_MS;
  while (!ready) {
    if (p.exitCode !== null || Date.now() > end) {
      p.kill('SIGKILL');
      throw new Error(`nft monitor in ${n.netns} showed no event in ${MONITOR_READY_MS} ms (exit ${String(p.exitCode)})`);
    }
    await nsExec(n.netns, ['nft', '-f', '-'], { input: `add table ip ${probe}\ndelete table ip ${probe}\n` });
    for (let i = 0; i < 10 && !ready; i++) await new Promise((r) => setTimeout(r, 50));
  }
  return {
    next: (ip, timeoutMs) => new Promise((resolve, reject) => {
      const timer = setTimeout(() => { waiters.delete(ip); reject(new Error(`${ip} not seen in ${timeoutMs} ms`)); }, timeoutMs);
      waiters.set(ip, (t) => { clearTimeout(timer); resolve(t); });
    }),
    close: () => { p.kill('SIGKILL'); },
  };
}

const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** kube-proxy iptables mode's endpoint chain: KUBE-SEP- and 16 characters of base32(sha256(port name + protocol + endpoint)). */
export function sepChain(servicePortName: string, endpoint: string): string {
  let bits = 0;
  let v = 0;
  let out = '';
  for (const b of createHash('sha256').update(`${servicePortName}tcp${endpoint}`).digest()) {
    v = ((v << 8) | b) & 0xffff;
    bits += 8;
    while (bits >= 5 && out.length < 16) { out += B32[(v >>> (bits - 5)) & 31]; bits -= 5; }
  }
  return `KUBE-SEP-${out}`;
}

/** Wall ms once kube-proxy iptables mode's chain for endpoint ip:8080 of `servicePortName` exists (the table is restored atomically); polled back to back. */
export async function pollEndpointChain(n: ClusterNode, servicePortName: string, ip: string, timeoutMs: number): Promise<number> {
  const chain = sepChain(servicePortName, `${ip}:8080`);
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if ((await nsExec(n.netns, ['iptables', '-w', '-t', 'nat', '-S', chain])).code === 0) return performance.timeOrigin + performance.now();
  }
  throw new Error(`${chain} (${servicePortName} -> ${ip}) not in the kernel after ${timeoutMs} ms`);
}
