// A simulated cluster's wiring on one machine: an underlay namespace holding a bridge, node
// namespaces attached to it by veth (uplink `eth0`), and pod namespaces. Everything it makes is
// removed by destroy(), on process exit and on Ctrl-C; the machine's root namespace is never touched.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run, type ExecResult } from './exec.ts';
import { addNetnsSync, deleteNetnsSync, inNetns, releaseNetns, sweepStaleTestNetnsOnce } from './netns.ts';

export type { ExecResult };

export interface SimNode {
  /** 1-based node number. */
  id: number;
  /** Namespace name (under /var/run/netns). */
  netns: string;
  path: string;
  /** Underlay address of the node's uplink `eth0`. */
  ip: string;
  /** Underlay IPv6 address of `eth0` on a dual-stack topology (2001:db8:2::<10 + id>, documentation prefix). */
  ip6?: string;
  uplink: string;
  /** A private directory for this node's files (subnet.env, data dirs, logs). */
  dir: string;
}

export interface SimPod {
  name: string;
  netns: string;
  path: string;
  node: SimNode;
}


const live = new Set<Topology>();
let hooked = false;

function hookCleanup(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', () => {
    for (const t of live) t.destroySync();
  });
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      for (const t of live) t.destroySync();
      process.exit(130);
    });
  }
}

/** Runs a command inside a namespace (`ip netns exec`); resolves with its output, never rejects on exit code. */
export function nsExec(netns: string, cmd: string[], opts: { timeoutMs?: number; input?: string } = {}): Promise<ExecResult> {
  return run(inNetns(netns, cmd), { timeoutMs: opts.timeoutMs ?? 30_000, ...(opts.input !== undefined ? { input: opts.input } : { closeStdin: false }) });
}

/** Like nsExec, but throws with the command's stderr when it fails. */
export async function nsRun(netns: string, cmd: string[]): Promise<string> {
  const r = await nsExec(netns, cmd);
  if (r.code !== 0) throw new Error(`[${netns}] ${cmd.join(' ')} failed (${String(r.code)}): ${r.stderr.trim()}`);
  return r.stdout;
}

/** The namespaces, veths and processes of one simulated cluster. */
export class Topology {
  readonly prefix: string;
  readonly underlay: string;
  readonly nodes: SimNode[] = [];
  readonly pods: SimPod[] = [];
  readonly dir: string;
  private readonly namespaces: string[] = [];
  private readonly procs: ChildProcess[] = [];
  private destroyed = false;
  private ipv6 = false;

  private constructor(prefix: string) {
    this.prefix = prefix;
    this.underlay = `${prefix}-ul`;
    this.dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  }

  /** Builds the underlay and `nodes` node namespaces on 192.0.2.0/24 (TEST-NET-1, never routed); `ipv6` adds 2001:db8:2::/64. */
  static async create(opts: { nodes: number; prefix?: string; ipv6?: boolean }): Promise<Topology> {
    hookCleanup();
    await sweepStaleTestNetnsOnce();
    const t = new Topology(opts.prefix ?? `wf${randomBytes(2).toString('hex')}`);
    t.ipv6 = opts.ipv6 === true;
    live.add(t);
    try {
      await t.addNetns(t.underlay);
      await nsRun(t.underlay, ['ip', 'link', 'add', 'br0', 'type', 'bridge']);
      await nsRun(t.underlay, ['ip', 'link', 'set', 'br0', 'up']);
      for (let i = 1; i <= opts.nodes; i++) await t.addNode(i);
      return t;
    } catch (e) {
      t.destroySync();
      throw e;
    }
  }

  private async addNetns(name: string): Promise<void> {
    addNetnsSync(name);
    this.namespaces.push(name);
    await nsRun(name, ['ip', 'link', 'set', 'lo', 'up']);
  }

  private async addNode(id: number): Promise<SimNode> {
    const netns = `${this.prefix}-n${id}`;
    await this.addNetns(netns);
    const port = `n${id}`;
    await nsRun(this.underlay, ['ip', 'link', 'add', port, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', netns]);
    await nsRun(this.underlay, ['ip', 'link', 'set', port, 'master', 'br0', 'up']);
    const ip = `192.0.2.${10 + id}`;
    await nsRun(netns, ['ip', 'addr', 'add', `${ip}/24`, 'dev', 'eth0']);
    // nodad: the address is unique by construction, and a tentative one could not carry traffic yet.
    const ip6 = this.ipv6 ? `2001:db8:2::${10 + id}` : undefined;
    if (ip6 !== undefined) await nsRun(netns, ['ip', '-6', 'addr', 'add', `${ip6}/64`, 'dev', 'eth0', 'nodad']);
    await nsRun(netns, ['ip', 'link', 'set', 'eth0', 'up']);
    await nsRun(netns, ['sysctl', '-qw', 'net.ipv4.ip_forward=1']);
    if (ip6 !== undefined) await nsRun(netns, ['sysctl', '-qw', 'net.ipv6.conf.all.forwarding=1']);
    const dir = join(this.dir, `n${id}`);
    mkdirSync(dir, { recursive: true });
    const node: SimNode = { id, netns, path: `/var/run/netns/${netns}`, ip, ...(ip6 !== undefined ? { ip6 } : {}), uplink: 'eth0', dir };
    this.nodes.push(node);
    return node;
  }

  /** Adds a namespace `<prefix>-<name>` on the underlay with address `ip`/24 on its eth0 (e.g. an etcd server); removed by destroy(). */
  async addUnderlayHost(name: string, ip: string): Promise<{ netns: string; ip: string }> {
    const netns = `${this.prefix}-${name}`;
    await this.addNetns(netns);
    await nsRun(this.underlay, ['ip', 'link', 'add', name, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', netns]);
    await nsRun(this.underlay, ['ip', 'link', 'set', name, 'master', 'br0', 'up']);
    await nsRun(netns, ['ip', 'addr', 'add', `${ip}/24`, 'dev', 'eth0']);
    await nsRun(netns, ['ip', 'link', 'set', 'eth0', 'up']);
    return { netns, ip };
  }

  /** Creates an empty pod namespace on a node (the plugins wire it). */
  async addPod(node: SimNode, index: number): Promise<SimPod> {
    const netns = `${node.netns}-p${index}`;
    addNetnsSync(netns);
    this.namespaces.push(netns);
    const pod: SimPod = { name: `n${node.id}p${index}`, netns, path: `/var/run/netns/${netns}`, node };
    this.pods.push(pod);
    return pod;
  }

  /** Starts a long-running process inside a namespace; it is killed by destroy(). */
  spawnIn(netns: string, cmd: string[], logFile?: string, wrap: readonly string[] = []): ChildProcess {
    // With a log file the process gets its own stdout/stderr fds (not pipes through us), so a daemon
    // keeps running and logging when the harness exits (demo --keep) and never dies of SIGPIPE.
    // Without one its output is piped to the caller (child.stdout), e.g. to read `ip monitor`.
    const out = logFile !== undefined ? openSync(logFile, 'a') : 'pipe';
    const argv = [...wrap, ...inNetns(netns, cmd)];
    const child = spawn(argv[0] ?? 'ip', argv.slice(1), { stdio: ['ignore', out, out], detached: false });
    if (typeof out === 'number') closeSync(out);
    // Flowing mode: output nobody listens to is discarded instead of filling the pipe and blocking
    // the child; a listener attached right after spawnIn (same tick) still sees everything.
    child.stdout?.resume();
    child.stderr?.resume();
    this.procs.push(child);
    return child;
  }

  /**
   * Leaves everything running when this process exits (demo --keep): no cleanup on exit, and the
   * processes are no longer waited for. destroySync() still removes it all when called.
   */
  detach(): void {
    live.delete(this);
    for (const ns of this.namespaces) releaseNetns(ns);
    for (const p of this.procs) p.unref();
  }

  /** Kills processes and deletes every namespace (pods, nodes, underlay) and the temp dir. */
  destroySync(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    live.delete(this);
    for (const p of this.procs) if (p.exitCode === null) p.kill('SIGKILL');
    // deleteNetnsSync kills what still runs inside first (daemons outlive `ip netns exec`).
    for (const ns of [...this.namespaces].reverse()) deleteNetnsSync(ns, true);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
