// DEL only: forget the node's UDP conntrack entries answered by the removed pod, so clients are not black-holed.
import { existsSync } from 'node:fs';
import { log } from '../../lib/cni/log.ts';
import { parseIp } from '../../lib/ip/addr.ts';

const CONNTRACK_CANDIDATES = ['/usr/sbin/conntrack', '/sbin/conntrack', '/usr/bin/conntrack'];

/**
 * In the calling thread's (node) netns, or `netnsPath`: deletes the UDP conntrack entries whose reply
 * comes from one of `podIps`, i.e. every UDP flow DNATed to (or addressed to) the removed pod. UDP has
 * no close, so such an entry outlives the pod (nf_conntrack_udp_timeout_stream, 120 s by default) and
 * a client that keeps sending from the same port would keep being DNATed to the dead address even
 * after another pod takes the hostPort. One conntrack(8) run per pod address rather than per mapping:
 * each run dumps the whole table (~40 ms here), and the pod is going away, so all its UDP flows may go.
 * We spawn conntrack-tools rather than speak ctnetlink: this runs on DEL only, never on ADD, and a
 * missing tool is logged, not fatal (DEL must succeed). Returns the number of flows deleted, -1 when
 * conntrack could not be run.
 */
export function flushUdpConntrack(podIps: readonly string[], opts: { netnsPath?: string } = {}): number {
  const ips = [...new Set(podIps)].filter((ip) => parseIp(ip) !== null);
  if (ips.length === 0) return 0;
  const bin = CONNTRACK_CANDIDATES.find((p) => existsSync(p));
  if (bin === undefined) {
    log.warn('conntrack(8) not found; UDP flows of removed hostPorts stay until they time out', { pods: ips.join(',') });
    return -1;
  }
  // Fetched here, not imported: node:child_process pulls in net, dns and streams, which every portmap
  // start (ADD and DEL, most of them with nothing to flush) would load and compile for nothing.
  const { spawnSync } = process.getBuiltinModule('node:child_process');
  let deleted = 0;
  for (const ip of ips) {
    const args = ['-f', parseIp(ip)?.family === 6 ? 'ipv6' : 'ipv4', '-D', '-p', 'udp', '--reply-src', ip];
    // With netnsPath (tests, tools), run under nsenter as lib/netfilter's runNft does.
    const [file, argv] = opts.netnsPath === undefined ? [bin, args] : ['nsenter', [`--net=${opts.netnsPath}`, '--', bin, ...args]];
    const r = spawnSync(file, argv, { encoding: 'utf8', timeout: 5000, stdio: ['ignore', 'pipe', 'pipe'] });
    // conntrack exits 1 when nothing matched ("0 flow entries have been deleted"): not an error here.
    const m = /(\d+) flow entries have been deleted/.exec(r.stderr ?? '');
    if (m?.[1] !== undefined) deleted += Number(m[1]);
    else log.warn('conntrack flush failed', { args: args.join(' '), status: r.status, stderr: (r.stderr ?? '').trim() });
  }
  return deleted;
}
