// A single-member etcd for a simulated cluster, in its own namespace on the underlay (never the
// machine's root namespace): start, health wait, stop (for outage tests), restart on the same data, and wipe (data loss).
import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { nsExec, nsRun, type Topology } from './topology.ts';

/** A running (or stopped) etcd of one topology. */
export class EtcdServer {
  private proc: ChildProcess | undefined;

  private constructor(private readonly topo: Topology, readonly netns: string, readonly ip: string) {}

  /** etcd's data directory (kept across stop/start; removed by wipe). */
  get dataDir(): string {
    return join(this.topo.dir, 'etcd');
  }

  /** Client URL as the nodes reach it. */
  get url(): string {
    return `http://${this.ip}:2379`;
  }

  /** Adds namespace `<prefix>-etcd` at `ip` on the underlay and starts etcd there. */
  static async create(topo: Topology, ip = '192.0.2.2'): Promise<EtcdServer> {
    const host = await topo.addUnderlayHost('etcd', ip);
    const e = new EtcdServer(topo, host.netns, ip);
    await e.start();
    return e;
  }

  /** Starts etcd on the same data directory; resolves once /health says true. */
  async start(): Promise<void> {
    const peer = `http://${this.ip}:2380`;
    this.proc = this.topo.spawnIn(this.netns, [
      'etcd', '--name', 'weft', '--data-dir', this.dataDir, '--listen-client-urls', this.url, '--advertise-client-urls', this.url,
      '--listen-peer-urls', peer, '--initial-advertise-peer-urls', peer, '--initial-cluster', `weft=${peer}`, '--log-level', 'error',
    ], join(this.topo.dir, 'etcd.log'));
    const end = Date.now() + 20_000;
    for (;;) {
      const r = await nsExec(this.netns, ['curl', '-fsS', '--max-time', '1', `${this.url}/health`]);
      if (r.code === 0 && r.stdout.includes('"true"')) return;
      if (Date.now() > end) throw new Error(`etcd did not become healthy: ${r.stderr}`);
      await new Promise((res) => setTimeout(res, 100));
    }
  }

  /** Writes a key with etcdctl from inside etcd's namespace. */
  async put(key: string, value: string): Promise<void> {
    await nsRun(this.netns, ['env', 'ETCDCTL_API=3', 'etcdctl', '--endpoints', this.url, 'put', key, value]);
  }

  /** Stops etcd (SIGKILL: an outage, not a shutdown); data stays for start(). */
  async stop(): Promise<void> {
    const p = this.proc;
    this.proc = undefined;
    if (!p || p.exitCode !== null) return;
    // `ip netns exec` execs etcd, so the child's pid is etcd's.
    const closed = new Promise((res) => p.once('close', res));
    p.kill('SIGKILL');
    await closed;
  }

  /** Stops etcd and deletes its data directory: the next start() begins empty (etcd lost its data). */
  async wipe(): Promise<void> {
    await this.stop();
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}
