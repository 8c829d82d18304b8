// DEL only: forget the node's UDP conntrack entries of removed mappings, so clients are not black-holed.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { log } from '../../lib/cni/log.ts';
import { parseIp } from '../../lib/ip/addr.ts';

const CONNTRACK_CANDIDATES = ['/usr/sbin/conntrack', '/sbin/conntrack', '/usr/bin/conntrack'];

/** A removed UDP mapping: the original destination port and the pod address it was DNATed to. */
export interface UdpFlowSpec {
  hostPort: number;
  podIp: string;
}

/**
 * In the calling thread's (node) netns: deletes UDP conntrack entries whose original destination port
 * is `hostPort` and whose reply comes from `podIp`, i.e. the flows DNATed to this pod. UDP has no
 * close, so such an entry outlives the pod (nf_conntrack_udp_timeout_stream, 120 s by default) and a
 * client that keeps sending would keep hitting the dead pod's address even after a new pod takes the
 * hostPort. We spawn conntrack(8) (conntrack-tools) rather than speak ctnetlink ourselves: this runs
 * only on DEL, never on ADD, and a missing tool is logged, not fatal (DEL must succeed).
 * Returns how many flows were deleted (-1 when conntrack could not be run). `netnsPath`: another netns.
 */
export function flushUdpConntrack(flows: readonly UdpFlowSpec[], opts: { netnsPath?: string } = {}): number {
  if (flows.length === 0) return 0;
  const bin = CONNTRACK_CANDIDATES.find((p) => existsSync(p));
  if (bin === undefined) {
    log.warn('conntrack(8) not found; stale UDP flows of removed hostPorts stay until they time out', { flows: flows.length });
    return -1;
  }
  let deleted = 0;
  for (const f of flows) {
    const ip = parseIp(f.podIp);
    if (ip === null || !Number.isInteger(f.hostPort)) continue;
    const args = ['-f', ip.family === 4 ? 'ipv4' : 'ipv6', '-D', '-p', 'udp', '--orig-port-dst', String(f.hostPort), '--reply-src', f.podIp];
    // With netnsPath (tests, tools), run under nsenter like lib/netfilter's runNft does.
    const [file, argv] = opts.netnsPath === undefined ? [bin, args] : ['nsenter', [`--net=${opts.netnsPath}`, '--', bin, ...args]];
    const r = spawnSync(file, argv, { encoding: 'utf8', timeout: 5000, stdio: ['ignore', 'pipe', 'pipe'] });
    // conntrack exits 1 when nothing matched ("0 flow entries have been deleted"): not an error here.
    const m = /(\d+) flow entries have been deleted/.exec(r.stderr ?? '');
    if (m?.[1] !== undefined) deleted += Number(m[1]);
    else log.warn('conntrack flush failed', { args: args.join(' '), status: r.status, stderr: (r.stderr ?? '').trim() });
  }
  return deleted;
}
