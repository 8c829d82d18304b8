// The Service proxies of the side-by-side benchmark and how each one's kernel state is read, in
// its own node namespace: weftd --service-proxy (the built bundle), kube-proxy v1.34.4 in nftables
// mode and in iptables mode on each of Debian's iptables backends: `kube-proxy-iptables` runs the
// machine's `iptables` (iptables-nft 1.8.9: nf_tables chains of table ip nat), and
// `kube-proxy-iptables-legacy` runs iptables-legacy (services-peer-legacy.ts). "Programmed" is seen cheaply: one element looked up (nft get element) or one
// chain listed for a cold start, and nf_tables notifications carrying a new endpoint's address for a
// change (kube-proxy: also its chains probed by name, services-peer-chains.ts).
import { execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isSysError } from '../../lib/errno/errno.ts';
import { NETLINK_NETFILTER } from '../../lib/netfilter/nfnl/constants.ts';
import { openSysTransport } from '../../lib/netlink/socket.ts';
import { openNetns, withNetns } from '../../lib/netns/index.ts';
import { sys } from '../../lib/sys/index.ts';
import type { Cluster, ClusterNode } from '../../testkit/cluster.ts';
import { kubeProxyArgv, stopKubeProxy } from '../../testkit/kube-proxy.ts';
import { killProcessesIn } from '../../testkit/netns-sweep.ts';
import { nsExec } from '../../testkit/topology.ts';
import { clearLegacy, legacyRuleCount, writeLegacyBin } from './services-peer-legacy.ts';

/** The peers (each on its own node: the index here). */
export type PeerName = 'weft' | 'kube-proxy-nftables' | 'kube-proxy-iptables' | 'kube-proxy-iptables-legacy';
export const PEERS: readonly PeerName[] = ['weft', 'kube-proxy-nftables', 'kube-proxy-iptables', 'kube-proxy-iptables-legacy'];

/** kube-proxy's --proxy-mode for a peer (none for weft). Pure. */
export function peerMode(peer: PeerName): 'nftables' | 'iptables' | undefined {
  return peer === 'weft' ? undefined : peer === 'kube-proxy-nftables' ? 'nftables' : 'iptables';
}

/** A running peer: its process (the pid /proc is read for) and how to stop it and clear its rules. */
export interface RunningPeer {
  proc: ChildProcess;
  /** Its log file (in the node's directory, removed with the cluster). */
  log: string;
  /** The legacy peer's restore record (services-peer-legacy.ts). */
  restores?: string;
  stop(): Promise<void>;
}

/** Starts `peer` on node `n` from cold (its rules cleared first). Runs in the node's namespace. */
export async function startPeer(c: Cluster, n: ClusterNode, peer: PeerName): Promise<RunningPeer> {
  await clearRules(n, peer);
  if (peer === 'weft') {
    const log = join(n.dir, 'weftd-svc.log');
    const proc = c.topo.spawnIn(n.netns, [...c.weftdArgv(n), '--service-proxy'], log);
    return { proc, log, stop: async () => { await stopProc(proc); await clearRules(n, peer); } };
  }
  const mode = peerMode(peer) ?? 'iptables';
  // minSyncPeriod left at its default (1 s), as a cluster runs it.
  const log = join(n.dir, `${peer}.log`);
  const legacy = peer === 'kube-proxy-iptables-legacy' ? writeLegacyBin(n.dir) : undefined;
  const wrap = legacy === undefined ? [] : ['env', `PATH=${legacy.bin}:${process.env['PATH'] ?? '/usr/sbin:/usr/bin:/sbin:/bin'}`];
  const proc = c.topo.spawnIn(n.netns, kubeProxyArgv(n, mode, c.kube!.kubeconfig, '10.244.0.0/16'), log, wrap);
  const stop = async () => {
    await stopKubeProxy(proc);
    // A restore still running (iptables-nft's first one takes minutes at 5,000 Services) outlives kube-proxy: it would hold a core through the next peer's figures.
    killProcessesIn(n.netns);
    await clearRules(n, peer);
  };
  return { proc, log, ...(legacy === undefined ? {} : { restores: legacy.record }), stop };
}

/** The pids of the processes in `n`'s namespace (undefined when it is gone). */
function netnsPids(n: ClusterNode): number[] | undefined {
  try {
    return execFileSync('ip', ['netns', 'pids', n.netns], { encoding: 'utf8' }).split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return undefined;
  }
}

/** The processes in `n`'s namespace but `except`, as "name pid (CPU s, running s)": what a peer that did not finish is still running. */
export function netnsProcs(n: ClusterNode, except: number | undefined): string {
  const pids = netnsPids(n);
  if (pids === undefined) return '(namespace gone)';
  const ticksUp = Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * 100;
  const one = (pid: number): string => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      return `${comm} ${pid} (CPU ${((Number(f[11]) + Number(f[12])) / 100).toFixed(1)} s, running ${((ticksUp - Number(f[19])) / 100).toFixed(0)} s)`;
    } catch {
      return `${pid} (gone)`;
    }
  };
  const rest = pids.filter((p) => p !== except).map(one);
  return rest.length > 0 ? rest.join(', ') : 'nothing';
}

/** user + system (+ children's reaped) CPU ticks of a /proc/PID/stat, in ms; NaN when gone. */
function statCpuMs(pid: number, reaped: boolean): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
    return ((f[11] ?? NaN) + (f[12] ?? NaN) + (reaped ? (f[13] ?? NaN) + (f[14] ?? NaN) : 0)) * 10;
  } catch {
    return NaN;
  }
}

/**
 * CPU (ms) of a peer's children so far: those it has reaped (its cutime + cstime: kube-proxy's `nft`
 * and `iptables-restore` runs, weftd's `nft`) plus every other process still running in its node
 * namespace (a restore not yet reaped). A difference of two readings is then the children's CPU in
 * that window, also for a child that started before it.
 */
export function childrenCpuMs(n: ClusterNode, pid: number | undefined): number {
  if (pid === undefined) return NaN;
  // Namespace gone: its children's CPU is in the reaped part.
  const pids = netnsPids(n) ?? [];
  const own = statCpuMs(pid, true) - statCpuMs(pid, false);
  return pids.filter((p) => p !== pid).reduce((sum, p) => { const c = statCpuMs(p, true); return Number.isNaN(c) ? sum : sum + c; }, own);
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
  if (peer === 'kube-proxy-iptables-legacy') await clearLegacy(n);
}

/** The set whose element for a ClusterIP makes a Service reachable (weft adds it after the Service's endpoint slots); none for iptables mode. */
export function serviceSet(peer: PeerName): string | undefined {
  return peer === 'weft' ? 'svc4' : peer === 'kube-proxy-nftables' ? 'service-ips' : undefined;
}

/** True once `clusterIP`:80/tcp is in the peer's kernel state (one element, or one chain for iptables): seconds per look-up at 5,000 Services. */
export async function serviceProgrammed(n: ClusterNode, peer: PeerName, clusterIP: string): Promise<boolean> {
  if (peerMode(peer) === 'iptables') {
    const r = await nsExec(n.netns, [peer === 'kube-proxy-iptables' ? 'iptables' : 'iptables-legacy', '-w', '-t', 'nat', '-S', 'KUBE-SERVICES'], { timeoutMs: 120_000 });
    return r.code === 0 && r.stdout.includes(`-d ${clusterIP}/32 `);
  }
  const [family, table, map] = peer === 'weft' ? ['inet', 'weft-svc', 'svc4'] : ['ip', 'kube-proxy', 'service-ips'];
  const r = await nsExec(n.netns, ['nft', 'get', 'element', family, table, map, `{ ${clusterIP} . tcp . 80 }`], { timeoutMs: 120_000 });
  return r.code === 0;
}

/** Rules and set/map elements of the peer's tables (weft: inet weft-svc; kube-proxy: the namespace's whole ruleset, legacy tables for the legacy peer). */
export async function ruleCounts(n: ClusterNode, peer: PeerName): Promise<{ rules: number; elements: number }> {
  if (peer === 'kube-proxy-iptables-legacy') return { rules: await legacyRuleCount(n), elements: 0 };
  const argv = peer === 'weft' ? ['nft', '-j', 'list', 'table', 'inet', 'weft-svc'] : ['nft', '-j', 'list', 'ruleset'];
  const r = await nsExec(n.netns, argv, { timeoutMs: 600_000 });
  const json = JSON.parse(r.stdout || '{"nftables":[]}') as { nftables: Array<{ rule?: unknown; map?: { elem?: unknown[] }; set?: { elem?: unknown[] } }> };
  const elements = json.nftables.reduce((k, x) => k + ((x.map ?? x.set)?.elem?.length ?? 0), 0);
  return { rules: json.nftables.filter((x) => x.rule !== undefined).length, elements };
}

/** nf_tables notifications in a node namespace: resolves waiters when a notification carries their address. */
export interface AddressMonitor {
  /** Wall ms at which `ip` first appears in a netfilter notification from now on, in one about set `inSet` when given (rejects after timeoutMs). */
  next(ip: string, timeoutMs: number, inSet?: string): Promise<number>;
  /** Times the receive queue overflowed (notifications lost: a waiter may then time out). */
  overruns(): number;
  close(): void;
}

/** nfnetlink's nf_tables multicast group (linux/netfilter/nfnetlink.h NFNLGRP_NFTABLES). */
const NFNLGRP_NFTABLES = 7;

/**
 * Subscribes to nf_tables notifications (NFNLGRP_NFTABLES) in `n`'s namespace, in this process. The
 * subscription is in place when this returns (the socket is bound to the group), so no change made
 * afterwards can be missed for a slow start, as `nft monitor` could be: it reads the whole ruleset
 * first and again per event (seconds each at 5,000 Services: it printed nothing for 120 s there). A
 * notification matches an address when its bytes hold the address, in binary (an element's data, a
 * rule's DNAT) or as text (kube-proxy's endpoint chain names); with a set name, only in a
 * notification that names that set (a Service's verdict element, not its endpoints' keys).
 */
export function monitorAddresses(n: ClusterNode): AddressMonitor {
  const h = openNetns(n.path);
  let t: ReturnType<typeof openSysTransport>;
  try {
    t = withNetns(h, () => openSysTransport(NETLINK_NETFILTER, 1 << (NFNLGRP_NFTABLES - 1)));
  } finally {
    h.close();
  }
  const waiters = new Map<string, { bin: Buffer; text: Buffer; set: Buffer | undefined; done: (t: number) => void }>();
  let overruns = 0;
  let pollId: number | undefined;
  const drain = (): void => {
    while (pollId !== undefined) {
      let buf: Uint8Array | null;
      try {
        buf = t.recv(0);
      } catch (e) {
        if (isSysError(e, 'ENOBUFS')) { overruns++; continue; }
        throw e;
      }
      if (buf === null) return;
      const at = performance.timeOrigin + performance.now();
      const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
      for (const [ip, w] of waiters) {
        if ((w.set === undefined || b.includes(w.set)) && (b.includes(w.bin) || b.includes(w.text))) { waiters.delete(ip); w.done(at); }
      }
    }
  };
  pollId = sys().pollStart(t.fd, drain, false);
  return {
    next: (ip, timeoutMs, inSet) => new Promise((resolve, reject) => {
      const timer = setTimeout(() => { waiters.delete(ip); reject(new Error(`${ip} not seen in ${timeoutMs} ms (${overruns} overruns)`)); }, timeoutMs);
      waiters.set(ip, { bin: Buffer.from(ip.split('.').map(Number)), text: Buffer.from(ip), set: inSet === undefined ? undefined : Buffer.from(`${inSet}\0`), done: (at) => { clearTimeout(timer); resolve(at); } });
    }),
    overruns: () => overruns,
    close: () => {
      if (pollId === undefined) return;
      sys().pollStop(pollId);
      pollId = undefined;
      t.close();
    },
  };
}
