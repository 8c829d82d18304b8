// A single-member etcd for a simulated cluster, in its own namespace on the underlay (never the
// machine's root namespace): start, health wait, stop (for outage tests), restart on the same data, and wipe (data loss).
import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { nsExec, nsRun, type Topology } from './topology.ts';

/** PEM files of an etcd serving TLS and requiring client certificates signed by `ca`. */
export interface EtcdTls {
  ca: string;
  cert: string;
  key: string;
  /** The client certificate etcdctl and the health probe present. */
  clientCert: string;
  clientKey: string;
  /** false: serve TLS without requiring client certificates (etcd's --client-cert-auth off). Default true. */
  clientCertAuth?: boolean;
}

/** Options of EtcdServer.create. */
export interface EtcdServerOptions {
  /** Namespace suffix and data directory name (default "etcd"): several etcds per topology. */
  name?: string;
  tls?: EtcdTls;
}

/** A running (or stopped) etcd of one topology. */
export class EtcdServer {
  private proc: ChildProcess | undefined;

  private constructor(private readonly topo: Topology, readonly netns: string, readonly ip: string, private readonly o: EtcdServerOptions) {}

  /** etcd's data directory (kept across stop/start; removed by wipe). */
  get dataDir(): string {
    return join(this.topo.dir, this.o.name ?? 'etcd');
  }

  /** Client URL as the nodes reach it. */
  get url(): string {
    return `${this.o.tls ? 'https' : 'http'}://${this.ip}:2379`;
  }

  /** etcdctl's connection flags (endpoint, and the client certificate under TLS). */
  get etcdctlArgs(): string[] {
    const t = this.o.tls;
    return ['--endpoints', this.url, ...(t ? ['--cacert', t.ca, '--cert', t.clientCert, '--key', t.clientKey] : [])];
  }

  /** Adds namespace `<prefix>-<name>` at `ip` on the underlay and starts etcd there. */
  static async create(topo: Topology, ip = '192.0.2.2', o: EtcdServerOptions = {}): Promise<EtcdServer> {
    const host = await topo.addUnderlayHost(o.name ?? 'etcd', ip);
    const e = new EtcdServer(topo, host.netns, ip, o);
    await e.start();
    return e;
  }

  /** Starts etcd on the same data directory; resolves once /health says true. */
  async start(): Promise<void> {
    const peer = `http://${this.ip}:2380`;
    const t = this.o.tls;
    this.proc = this.topo.spawnIn(this.netns, [
      'etcd', '--name', 'weft', '--data-dir', this.dataDir, '--listen-client-urls', this.url, '--advertise-client-urls', this.url,
      '--listen-peer-urls', peer, '--initial-advertise-peer-urls', peer, '--initial-cluster', `weft=${peer}`, '--log-level', 'error',
      // etcd verifies client certificates whenever it has a trusted CA: without client-cert auth it gets none.
      ...(t ? ['--cert-file', t.cert, '--key-file', t.key, ...(t.clientCertAuth === false ? [] : ['--trusted-ca-file', t.ca, '--client-cert-auth'])] : []),
    ], join(this.topo.dir, `${this.o.name ?? 'etcd'}.log`));
    const curlTls = t ? ['--cacert', t.ca, '--cert', t.clientCert, '--key', t.clientKey] : [];
    const end = Date.now() + 20_000;
    for (;;) {
      const r = await nsExec(this.netns, ['curl', '-fsS', '--max-time', '1', ...curlTls, `${this.url}/health`]);
      if (r.code === 0 && r.stdout.includes('"true"')) return;
      if (Date.now() > end) throw new Error(`etcd did not become healthy: ${r.stderr}`);
      await new Promise((res) => setTimeout(res, 100));
    }
  }

  /** Writes a key with etcdctl from inside etcd's namespace. */
  async put(key: string, value: string): Promise<void> {
    await this.etcdctl(['put', key, value]);
  }

  /** Runs etcdctl (v3 API) against this etcd from inside its namespace; resolves with stdout. */
  async etcdctl(args: string[]): Promise<string> {
    return nsRun(this.netns, ['env', 'ETCDCTL_API=3', 'etcdctl', ...this.etcdctlArgs, ...args]);
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
