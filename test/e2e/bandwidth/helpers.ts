// Shared pieces of the bandwidth end-to-end tests: the conflist, iperf3 between namespaces, and the
// node's tc/ifb state as `tc -j` and `ip -j` report it (the tests read the kernel with the real tools).
import { join } from 'node:path';
import { execPlugin, type ConfList, type PluginRun } from '../../../testkit/cni-runner.ts';
import { inNetns, run } from '../../../testkit/netns.ts';
import { nsExec, nsRun, type Topology } from '../../../testkit/topology.ts';

export const ROOT = join(import.meta.dirname, '..', '..', '..');
export const BIN_DIR = join(ROOT, 'dist', 'bin');

/** bridge + host-local, then bandwidth with the `bandwidth` capability (kubelet's annotations). */
export function bandwidthConfList(name: string, dataDir: string, subnet: string, extra: Record<string, unknown> = {}): ConfList {
  return {
    cniVersion: '1.0.0',
    name,
    plugins: [
      { type: 'bridge', bridge: `${name}br`.slice(0, 15), isGateway: true, ipMasq: false, ipam: { type: 'host-local', ranges: [[{ subnet }]], dataDir } },
      { type: 'bandwidth', capabilities: { bandwidth: true }, ...extra },
    ],
  };
}

/** Receiver-side throughput in bit/s of a TCP stream from `client` to `serverIp` (`reverse`: server to client). */
export async function iperf(topo: Topology, serverNs: string, client: string, serverIp: string, o: { reverse?: boolean; seconds?: number; port: number }): Promise<number> {
  const server = topo.spawnIn(serverNs, ['iperf3', '-s', '-1', '-p', String(o.port)]);
  try {
    let last = '';
    for (let attempt = 0; attempt < 20; attempt++) {
      const args = ['iperf3', '-c', serverIp, '-p', String(o.port), '-t', String(o.seconds ?? 4), '-O', '1', '-J'];
      if (o.reverse === true) args.push('-R');
      const r = await nsExec(client, args, { timeoutMs: 30_000 });
      last = r.stdout + r.stderr;
      if (r.code === 0) {
        const doc = JSON.parse(r.stdout) as { end?: { sum_received?: { bits_per_second: number } }; error?: string };
        const bps = doc.end?.sum_received?.bits_per_second;
        if (bps !== undefined) return bps;
        last = doc.error ?? r.stdout.slice(-400);
        if (!last.includes('refused') && !last.includes('busy')) break;
      }
      if (!last.includes('refused')) break;
      await new Promise((res) => setTimeout(res, 150));
    }
    throw new Error(`iperf3 failed: ${last.slice(0, 400)}`);
  } finally {
    if (server.exitCode === null) server.kill('SIGKILL');
  }
}

/** Qdiscs of the node that are not a kernel default (noqueue, pfifo_fast, mq, ...: handle 0:). */
export async function nodeQdiscs(nodeNs: string): Promise<Array<{ kind: string; handle: string; dev: string }>> {
  const r = await nsExec(nodeNs, ['tc', '-j', 'qdisc', 'show']);
  const list = JSON.parse(r.stdout || '[]') as Array<{ kind: string; handle: string; dev: string }>;
  return list.filter((q) => q.handle !== '0:');
}

/** Names of the node's ifb devices. */
export async function nodeIfbs(nodeNs: string): Promise<string[]> {
  const out = await nsRun(nodeNs, ['ip', '-j', '-d', 'link', 'show', 'type', 'ifb']);
  return (JSON.parse(out || '[]') as Array<{ ifname: string }>).map((l) => l.ifname);
}

/** The IPv4 address (without prefix) of a CNI result's first ip. */
export function resultIp(res: Record<string, unknown>): string {
  return ((res['ips'] as Array<{ address: string }>)[0]?.address ?? '').split('/')[0] ?? '';
}

/** Runs dist/bin/bandwidth (or `bin`) once inside `nodeNetns` with the given stdin object and env. */
export function runBandwidth(nodeNetns: string, o: {
  command: 'ADD' | 'DEL' | 'CHECK' | 'GC'; stdin: Record<string, unknown>; containerId?: string; netns?: string; bin?: string; killAfterMs?: number;
}): Promise<PluginRun & { signal?: string }> {
  const env: NodeJS.ProcessEnv = { CNI_COMMAND: o.command, CNI_IFNAME: 'eth0', CNI_PATH: BIN_DIR };
  if (o.containerId !== undefined) env['CNI_CONTAINERID'] = o.containerId;
  if (o.netns !== undefined && o.netns !== '') env['CNI_NETNS'] = o.netns;
  const bin = o.bin ?? join(BIN_DIR, 'bandwidth');
  if (o.killAfterMs === undefined) return execPlugin(bin, env, JSON.stringify(o.stdin), { binDirs: [BIN_DIR], nodeNetns });
  return killedRun(bin, env, JSON.stringify(o.stdin), nodeNetns, o.killAfterMs);
}

// `ip netns exec` execs the plugin in place (same pid), so SIGKILL reaches the plugin itself.
async function killedRun(bin: string, env: NodeJS.ProcessEnv, stdin: string, nodeNetns: string, ms: number): Promise<PluginRun & { signal?: string }> {
  const r = await run(inNetns(nodeNetns, [bin]), { env: { PATH: process.env.PATH, ...env }, input: stdin, killAfterMs: ms });
  return { code: r.signal === null ? r.code : null, stdout: r.stdout, stderr: '', json: undefined, ms: r.ms, ...(r.signal === null ? {} : { signal: r.signal }) };
}
